//! How each hosted channel is doing, as `raven status` shows it: the gateway writes
//! `<data dir>/gateway/health.json` whenever a channel's state changes. A channel is `ok`
//! only when both its halves are: its listening loop heard from its service last time, and
//! its last send went out; one whose sends fail reads `failing` even while it still hears its
//! service. The error kept is cut to [`remote::MAX_ERROR_CHARS`] and cleaned, whatever a
//! remote answered.

use super::remote;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One channel's health.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelHealth {
    /// `ok`, `failing` (its last poll or its last send failed; it retries) or `restarting`
    /// (it panicked).
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub restarts: u64,
    pub delivered: u64,
    pub failed: u64,
    pub last_error: Option<String>,
    /// The last send failed (and none went out since).
    #[serde(skip)]
    sends_failing: bool,
    /// The listening loop's last run failed (and it has not heard its service since).
    #[serde(skip)]
    listening_failing: bool,
}

impl ChannelHealth {
    /// The state its two halves make.
    fn settle(&mut self) {
        let failing = self.sends_failing || self.listening_failing;
        self.state = if failing { "failing" } else { "ok" }.into();
    }
}

/// The health of every hosted channel, written through to its file.
#[derive(Clone)]
pub struct HealthBoard {
    path: PathBuf,
    channels: Arc<Mutex<BTreeMap<String, ChannelHealth>>>,
}

impl HealthBoard {
    pub fn new(dir: &crate::data_dir::DataDir) -> Self {
        HealthBoard { path: Self::file(dir), channels: Default::default() }
    }

    pub fn file(dir: &crate::data_dir::DataDir) -> PathBuf {
        dir.root().join("gateway").join("health.json")
    }

    /// What the gateway last wrote (empty when it never ran).
    pub fn read(dir: &crate::data_dir::DataDir) -> BTreeMap<String, ChannelHealth> {
        std::fs::read(Self::file(dir)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    /// Changes `channel`'s record (its error cut and cleaned) and writes the board.
    pub fn update(&self, channel: &str, change: impl FnOnce(&mut ChannelHealth)) {
        let mut all = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        let h = all.entry(channel.to_owned()).or_default();
        let before = h.clone();
        change(h);
        h.last_error = h.last_error.take().map(|e| remote::short(&e));
        if *h == before {
            return;
        }
        if h.state != before.state {
            h.since = Some(Utc::now());
        }
        if let Ok(bytes) = serde_json::to_vec_pretty(&*all) {
            if let Err(e) = crate::store::write_atomic(&self.path, &bytes) {
                tracing::debug!("{} not written: {e}", self.path.display());
            }
        }
    }

    /// `channel` is hosted: `ok` until something fails.
    pub fn ok(&self, channel: &str) {
        self.update(channel, ChannelHealth::settle);
    }

    /// `channel`'s listening loop heard from its service.
    pub fn heard(&self, channel: &str) {
        self.update(channel, |h| {
            h.listening_failing = false;
            h.settle();
        });
    }

    /// `channel` cannot listen (or cannot start): `why`.
    pub fn failing(&self, channel: &str, why: &str) {
        self.update(channel, |h| {
            h.listening_failing = true;
            h.last_error = Some(why.to_owned());
            h.settle();
        });
    }

    /// A message went out on `channel`.
    pub fn sent(&self, channel: &str) {
        self.update(channel, |h| {
            h.delivered += 1;
            h.sends_failing = false;
            h.settle();
        });
    }

    /// A message did not go out on `channel`: `why`.
    pub fn send_failed(&self, channel: &str, why: &str) {
        self.update(channel, |h| {
            h.failed += 1;
            h.sends_failing = true;
            h.last_error = Some(why.to_owned());
            h.settle();
        });
    }

    /// Something `channel` heard could not be handled and was skipped: `why` (its state
    /// stays; the error is kept for `raven channels`).
    pub fn skipped(&self, channel: &str, why: &str) {
        self.update(channel, |h| h.last_error = Some(why.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> (tempfile::TempDir, HealthBoard) {
        let tmp = tempfile::tempdir().unwrap();
        let board = HealthBoard::new(&crate::data_dir::DataDir::new(tmp.path()));
        (tmp, board)
    }

    fn state(b: &HealthBoard, channel: &str) -> (String, Option<String>) {
        let all = b.channels.lock().unwrap();
        let h = &all[channel];
        (h.state.clone(), h.last_error.clone())
    }

    #[test]
    fn a_channel_whose_sends_fail_is_failing_though_it_still_hears_its_service() {
        let (_tmp, b) = board();
        b.ok("telegram");
        b.send_failed("telegram", "telegram sendMessage: 500 Internal Server Error");
        b.heard("telegram");
        let why = Some("telegram sendMessage: 500 Internal Server Error".to_owned());
        assert_eq!(state(&b, "telegram"), ("failing".into(), why.clone()), "a poll does not hide the failed send");
        b.sent("telegram");
        assert_eq!(state(&b, "telegram").0, "ok", "a send that went out mends it");
        b.failing("telegram", "getUpdates: 502");
        b.sent("telegram");
        assert_eq!(state(&b, "telegram").0, "failing", "a send does not hide a listener that fails");
        b.heard("telegram");
        assert_eq!(state(&b, "telegram").0, "ok");
    }

    #[test]
    fn a_huge_error_is_kept_cut_and_clean_in_the_file() {
        let (tmp, b) = board();
        let huge = format!("ntfy answered 500: \x1b[2J{}", "x".repeat(1_000_000));
        b.send_failed("ntfy", &huge);
        b.failing("matrix", &huge);
        b.skipped("telegram", &huge);
        let written = std::fs::metadata(HealthBoard::file(&crate::data_dir::DataDir::new(tmp.path()))).unwrap().len();
        assert!(written < 4 * remote::MAX_ERROR_CHARS as u64 * 3, "health.json holds {written} bytes");
        for (name, h) in HealthBoard::read(&crate::data_dir::DataDir::new(tmp.path())) {
            let kept = h.last_error.unwrap();
            assert!(kept.chars().count() <= remote::MAX_ERROR_CHARS + 1, "{name}: {} chars", kept.len());
            assert!(!kept.contains('\x1b'), "{name}");
        }
    }
}
