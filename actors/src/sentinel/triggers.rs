//! The discovery trigger store (spec §11): `sentinel/triggers.json`, a file-based IPC modeled
//! on the cron jobs file. An operator (`raven discover`, from any process) appends a trigger;
//! the runner of whichever engine drains first takes every trigger under the lock, so a
//! request runs once even with a supervisor and an embedded REPL on one data dir. The drain
//! runs on its own short loop, apart from the tick.

use crate::store::{JsonStateStore, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

const SECTION: &str = "discovery_triggers";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    pub reason: String,
    pub requested_at: DateTime<Utc>,
}

pub struct TriggerStore(JsonStateStore);

impl TriggerStore {
    /// The triggers kept in `store` (the data dir's: `owners::Owner::Triggers`).
    pub fn new(store: JsonStateStore) -> Self {
        TriggerStore(store)
    }

    /// The triggers of `dir`, for a process that asks for a run.
    pub fn in_dir(dir: &crate::data_dir::DataDir) -> Result<Self, StoreError> {
        Ok(TriggerStore(crate::store::owners::open(dir, crate::store::owners::Owner::Triggers)?))
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
    use crate::store::{db::Database, sections::Rows};
    use chrono::TimeZone;

    /// The triggers' rows in `dir`'s state database, on a connection of their own (as another
    /// process would have).
    fn store(dir: &std::path::Path) -> TriggerStore {
        let (db, _) = Database::open(&dir.join("state.db")).unwrap();
        let rows = Rows::open(std::sync::Arc::new(db), "triggers", &dir.join("triggers.json")).unwrap();
        TriggerStore::new(JsonStateStore::on_rows(rows))
    }

    #[test]
    fn a_trigger_from_another_process_is_drained_once_and_an_empty_drain_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap();
        let (operator, a, b) = (store(dir.path()), store(dir.path()), store(dir.path()));
        assert!(a.drain().unwrap().is_empty());
        assert_eq!(a.0.stamp(), None, "an empty drain wrote nothing");
        operator.request("operator", now).unwrap();
        operator.request("again", now).unwrap();
        let got = a.drain().unwrap();
        assert_eq!(got.iter().map(|t| t.reason.as_str()).collect::<Vec<_>>(), ["operator", "again"]);
        assert!(b.drain().unwrap().is_empty(), "taken once");
    }
}
