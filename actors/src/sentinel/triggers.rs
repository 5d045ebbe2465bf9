//! The discovery trigger store (spec §11): `sentinel/triggers.json`, a file-based IPC modeled
//! on the cron jobs file. An operator (`raven discover`, from any process) appends a trigger;
//! the runner of whichever engine drains first takes every trigger under the lock, so a
//! request runs once even with a supervisor and an embedded REPL on one data dir. The drain
//! runs on its own short loop, apart from the tick.

use crate::store::{JsonStateStore, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

const SECTION: &str = "discovery_triggers";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    pub reason: String,
    pub requested_at: DateTime<Utc>,
}

pub struct TriggerStore(JsonStateStore);

impl TriggerStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TriggerStore(JsonStateStore::new(path))
    }

    pub fn request(&self, reason: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
        self.0.update(SECTION, |t: &mut Vec<Trigger>| t.push(Trigger { reason: reason.to_owned(), requested_at: now }))
    }

    /// Takes every waiting trigger; an empty store is read, not written.
    pub fn drain(&self) -> Result<Vec<Trigger>, StoreError> {
        let (waiting, _) = self.0.read::<Vec<Trigger>>(SECTION)?;
        if waiting.is_empty() {
            return Ok(Vec::new());
        }
        self.0.update(SECTION, std::mem::take::<Vec<Trigger>>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_trigger_from_another_process_is_drained_once_and_an_empty_drain_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("triggers.json");
        let now = Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap();
        let (operator, a, b) = (TriggerStore::new(&path), TriggerStore::new(&path), TriggerStore::new(&path));
        assert!(a.drain().unwrap().is_empty());
        assert!(!path.exists(), "an empty drain wrote nothing");
        operator.request("operator", now).unwrap();
        operator.request("again", now).unwrap();
        let got = a.drain().unwrap();
        assert_eq!(got.iter().map(|t| t.reason.as_str()).collect::<Vec<_>>(), ["operator", "again"]);
        assert!(b.drain().unwrap().is_empty(), "taken once");
    }
}
