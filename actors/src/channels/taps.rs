//! Signed, single-use feedback links: what a push notification's buttons call (ntfy's `http`
//! actions), since a phone cannot send the gateway's secret. A link names the nudge, the
//! verdict and when it expires, and carries an HMAC-SHA256 of the three under a key kept in
//! `<data dir>/gateway/tap.key` (made at first use, private to the user). A link is taken
//! once: its signature is remembered in `gateway/taps.json` until it expires, and a second
//! tap is refused.

use crate::data_dir::DataDir;
use chrono::{DateTime, Utc};
use ring::hmac;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Mutex;

/// Why a tap was not taken.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TapError {
    #[error("this is not a feedback link of this Raven")]
    Forged,
    #[error("this feedback link expired")]
    Expired,
    #[error("this feedback link was already used")]
    Used,
    #[error("the feedback links cannot be checked: {0}")]
    Io(String),
    #[error("{0}")]
    NotRecorded(String),
}

/// A verified tap: what to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tap {
    pub nudge: String,
    pub verdict: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Used {
    /// Signature → when its link expires (after that it is refused as expired anyway).
    used: Vec<(String, DateTime<Utc>)>,
}

/// Makes and takes the links of one data dir.
pub struct TapLinks {
    key: hmac::Key,
    used_path: PathBuf,
    guard: Mutex<()>,
}

impl TapLinks {
    /// The data dir's key, made now if there is none.
    pub fn open(dir: &DataDir) -> Result<TapLinks, TapError> {
        let gateway = dir.root().join("gateway");
        let key_path = gateway.join("tap.key");
        let secret = match std::fs::read(&key_path) {
            Ok(k) if k.len() >= 32 => k,
            _ => make_key(&key_path)?,
        };
        Ok(TapLinks {
            key: hmac::Key::new(hmac::HMAC_SHA256, &secret),
            used_path: gateway.join("taps.json"),
            guard: Mutex::new(()),
        })
    }

    /// The path part of a link (`/tap/<token>`) for `verdict` on `nudge`, valid until `until`.
    pub fn path(&self, nudge: &str, verdict: &str, until: DateTime<Utc>) -> String {
        let claim = format!("{nudge}.{verdict}.{}", until.timestamp());
        format!("/tap/{claim}.{}", self.sign(&claim))
    }

    fn sign(&self, claim: &str) -> String {
        let tag = hmac::sign(&self.key, claim.as_bytes());
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Checks `token` and, once per link, records its tap with `record`; the link is used up
    /// only when `record` succeeds (a tap that could not be recorded may be tried again).
    pub fn take<T, E: std::fmt::Display>(
        &self,
        token: &str,
        now: DateTime<Utc>,
        record: impl FnOnce(&Tap) -> Result<T, E>,
    ) -> Result<T, TapError> {
        let (claim, sig) = token.rsplit_once('.').ok_or(TapError::Forged)?;
        let tag = hex(sig).ok_or(TapError::Forged)?;
        // In constant time: the check does not tell how much of a forged signature matched.
        hmac::verify(&self.key, claim.as_bytes(), &tag).map_err(|_| TapError::Forged)?;
        let mut parts = claim.splitn(3, '.');
        let (nudge, verdict, until) = (parts.next(), parts.next(), parts.next());
        let (Some(nudge), Some(verdict), Some(until)) = (nudge, verdict, until) else { return Err(TapError::Forged) };
        let until = until.parse().ok().and_then(|t| DateTime::from_timestamp(t, 0)).ok_or(TapError::Forged)?;
        if until <= now {
            return Err(TapError::Expired);
        }
        let tap = Tap { nudge: nudge.to_owned(), verdict: verdict.to_owned() };
        // The signature in one spelling: the same link in capitals is the same link.
        let sig = sig.to_ascii_lowercase();
        // One tap at a time: the check, the record and the mark belong together.
        let _one_at_a_time = self.guard.lock().unwrap_or_else(|p| p.into_inner());
        let state = super::state::ChannelState::at(self.used_path.clone());
        let mut used: Used = state.load();
        used.used.retain(|(_, until)| *until > now);
        if used.used.iter().any(|(s, _)| *s == sig) {
            return Err(TapError::Used);
        }
        let recorded = record(&tap).map_err(|e| TapError::NotRecorded(e.to_string()))?;
        used.used.push((sig, until));
        state.save(&used).map_err(|e| TapError::Io(e.to_string()))?;
        Ok(recorded)
    }
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn make_key(path: &std::path::Path) -> Result<Vec<u8>, TapError> {
    use ring::rand::SecureRandom;
    let mut key = vec![0u8; 32];
    ring::rand::SystemRandom::new().fill(&mut key).map_err(|_| TapError::Io("no random bytes".into()))?;
    let io = |e: std::io::Error| TapError::Io(format!("{}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
        crate::data_dir::make_private(dir).map_err(io)?;
    }
    crate::store::write_atomic_private(path, &key).map_err(io)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn a_link_is_taken_once_and_a_forged_or_late_one_never() {
        let tmp = tempfile::tempdir().unwrap();
        let links = TapLinks::open(&DataDir::new(tmp.path())).unwrap();
        let now = Utc::now();
        let path = links.path("a1b2c3", "accepted", now + Duration::hours(1));
        let token = path.strip_prefix("/tap/").unwrap();
        let take = |token: &str, at| links.take(token, at, |t| Ok::<Tap, String>(t.clone()));
        // A record that fails leaves the link unused.
        assert_eq!(links.take(token, now, |_| Err::<(), _>("busy")), Err(TapError::NotRecorded("busy".into())));
        let tap = take(token, now).unwrap();
        assert_eq!(tap, Tap { nudge: "a1b2c3".into(), verdict: "accepted".into() });
        assert_eq!(take(token, now), Err(TapError::Used));
        let (claim, sig) = token.rsplit_once('.').unwrap();
        assert_eq!(take(&format!("{claim}.{}", sig.to_ascii_uppercase()), now), Err(TapError::Used), "in capitals");

        let forged = token.replace("accepted", "dismissed");
        assert_eq!(take(&forged, now), Err(TapError::Forged));
        let late = links.path("a1b2c3", "dismissed", now + Duration::hours(1));
        let late = late.strip_prefix("/tap/").unwrap();
        assert_eq!(take(late, now + Duration::hours(2)), Err(TapError::Expired));

        // Another process with the same data dir has the same key (and the same used list).
        let again = TapLinks::open(&DataDir::new(tmp.path())).unwrap();
        assert_eq!(again.take(token, now, |t| Ok::<Tap, String>(t.clone())), Err(TapError::Used));
    }
}
