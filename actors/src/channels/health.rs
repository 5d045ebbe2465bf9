//! How each hosted channel is doing, as `raven status` shows it: the gateway writes
//! `<data dir>/gateway/health.json` whenever a channel's state changes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One channel's health.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelHealth {
    /// `ok`, `failing` (its last attempt failed; it retries) or `restarting` (it panicked).
    pub state: String,
    pub since: Option<DateTime<Utc>>,
    pub restarts: u64,
    pub delivered: u64,
    pub failed: u64,
    pub last_error: Option<String>,
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

    /// Changes `channel`'s record and writes the board.
    pub fn update(&self, channel: &str, change: impl FnOnce(&mut ChannelHealth)) {
        let mut all = self.channels.lock().unwrap_or_else(|p| p.into_inner());
        let h = all.entry(channel.to_owned()).or_default();
        let before = h.clone();
        change(h);
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

    pub fn ok(&self, channel: &str) {
        self.update(channel, |h| {
            h.state = "ok".into();
        });
    }

    pub fn failing(&self, channel: &str, why: &str) {
        self.update(channel, |h| {
            h.state = "failing".into();
            h.last_error = Some(crate::text::sanitize(why));
        });
    }
}
