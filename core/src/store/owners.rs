//! Who owns what in the engine's state: each owner's sections are rows of the state database
//! (`state.db`, see [`sections`](super::sections)), the outbox its own tables. Earlier
//! versions kept one file per owner (`sentinel/state/<owner>.json`, and the decision cache,
//! the pending menus and the operator triggers beside them); the first writer that opens an
//! owner imports its file and keeps it as `<file>.migrated`. A data dir of the older one-file
//! layout (`sentinel/state.json`) is split into the per-owner files first.

use super::db::Database;
use super::sections::Rows;
use super::{JsonStateStore, StoreError};
use crate::data_dir::DataDir;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Who owns a state file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The gate's ledger and learned feedback (section `policy`).
    Policy,
    /// Section `injector`.
    Injector,
    /// Section `defer`.
    Defer,
    /// Section `outbox` (what waits, and the dead letters).
    Outbox,
    /// The TaskDiscoverer's `discovery_last_day` and `discovery_offered`.
    Discovery,
    /// Discovery's menus waiting for an answer (section `pending_decisions`).
    Menus,
    /// Discovery runs an operator asked for (`raven discover`, section `discovery_triggers`).
    Triggers,
    /// The Sentinel's skip cache and last decision, and the day's brief.
    DecisionCache,
    /// The tokens the model was paid for today, per role (section `llm_tokens`).
    LlmTokens,
}

impl Owner {
    pub fn name(self) -> &'static str {
        match self {
            Owner::Policy => "policy",
            Owner::Injector => "injector",
            Owner::Defer => "defer",
            Owner::Outbox => "outbox",
            Owner::Discovery => "discovery",
            Owner::Menus => "menus",
            Owner::Triggers => "triggers",
            Owner::DecisionCache => "decision_cache",
            Owner::LlmTokens => "llm_tokens",
        }
    }

    /// `rows` with this owner's list field kept as a row an item: the gate's ledger, a fire a
    /// row, so a fire recorded writes that fire, not the week of fires before it.
    fn with_items(self, rows: Rows) -> Rows {
        match self {
            Owner::Policy => rows.with_items("policy", "fires"),
            _ => rows,
        }
    }

    /// The owner of a section of the one-file layout.
    fn of_section(section: &str) -> Owner {
        match section {
            "policy" => Owner::Policy,
            "injector" => Owner::Injector,
            "defer" => Owner::Defer,
            "outbox" => Owner::Outbox,
            _ => Owner::Discovery,
        }
    }

    /// The file an earlier version kept this owner's state in: `sentinel/state/<owner>.json`,
    /// or beside it in `sentinel/` for the four that never were in the one-file layout.
    pub fn path(self, dir: &DataDir) -> PathBuf {
        match self {
            Owner::Menus => dir.sentinel_dir().join("pending_decisions.json"),
            Owner::Triggers => dir.sentinel_dir().join("triggers.json"),
            Owner::DecisionCache => dir.sentinel_dir().join(crate::data_dir::DECISION_CACHE_FILE),
            Owner::LlmTokens => dir.sentinel_dir().join("llm_tokens.json"),
            _ => dir.sentinel_dir().join("state").join(format!("{}.json", self.name())),
        }
    }
}

/// The store of one owner, on the process's connection to the state database.
pub fn open(dir: &DataDir, owner: Owner) -> Result<JsonStateStore, StoreError> {
    open_in(Database::shared(&dir.state_db())?, dir, owner)
}

/// The store of one owner in `db`: the one-file layout (if any) split, and the owner's file
/// of an earlier version (if any) imported.
pub fn open_in(db: Arc<Database>, dir: &DataDir, owner: Owner) -> Result<JsonStateStore, StoreError> {
    split(dir)?;
    Ok(JsonStateStore::on_rows(owner.with_items(Rows::open(db, owner.name(), &owner.path(dir))?)))
}

/// Splits the one-file layout of an earlier version (if any) into the per-owner files.
pub fn split(dir: &DataDir) -> Result<(), StoreError> {
    split_legacy(&dir.legacy_state(), |section| Owner::of_section(section).path(dir))
}

/// The store of one owner for a command that only reads: an earlier version's file while no
/// writer has imported it (the owner's, or the one-file layout's while that is not split
/// yet), else the owner's rows in the state database (none yet: an empty store). Nothing is
/// created, moved or written.
pub fn read_only(dir: &DataDir, owner: Owner) -> Result<JsonStateStore, StoreError> {
    if let Some(file) = unimported(dir, owner) {
        return Ok(file);
    }
    match Database::open_read_only(&dir.state_db())? {
        Some(db) => Ok(JsonStateStore::on_rows(owner.with_items(Rows::read_only(Arc::new(db), owner.name())))),
        None => Ok(JsonStateStore::new(owner.path(dir))),
    }
}

/// An earlier version's file that holds `owner`'s state and no writer has imported yet: the
/// owner's own, or the one-file layout's while that is not split.
pub fn unimported(dir: &DataDir, owner: Owner) -> Option<JsonStateStore> {
    [owner.path(dir), dir.legacy_state()].into_iter().find(|p| p.exists()).map(JsonStateStore::new)
}

/// Moves every section of `legacy` into the file `target_of` names (a section already there
/// is kept, the legacy copy dropped), then renames `legacy` to `<name>.split-<UTC timestamp>` so no byte of
/// it is lost. Under the legacy file's lock, so two processes split it once. A corrupt legacy
/// file is kept aside like any other (see [`JsonStateStore`]).
pub fn split_legacy(legacy: &Path, target_of: impl Fn(&str) -> PathBuf) -> Result<(), StoreError> {
    if !legacy.exists() {
        return Ok(());
    }
    let old = JsonStateStore::new(legacy);
    old.with_root(|root| {
        for (section, value) in root {
            JsonStateStore::new(target_of(section)).adopt(section, value)?;
        }
        if !legacy.exists() {
            // It was corrupt, and is kept aside already.
            return Ok(());
        }
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let kept = legacy.with_extension(format!("json.split-{stamp}"));
        std::fs::rename(legacy, &kept).map_err(|e| old.io(e))?;
        tracing::info!(
            "{} was split into one file per owner; the old file is kept as {}",
            legacy.display(),
            kept.display()
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_file_state_is_split_once_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        std::fs::create_dir_all(dir.sentinel_dir()).unwrap();
        let legacy =
            br#"{"policy": {"multiplier": 0.5}, "outbox": {"entries": []}, "discovery_last_day": "2026-03-02"}"#;
        std::fs::write(dir.legacy_state(), legacy).unwrap();

        let policy = open(&dir, Owner::Policy).unwrap();
        let (v, _) = policy.read::<serde_json::Value>("policy").unwrap();
        assert_eq!(v["multiplier"], 0.5);
        let (day, _) = open(&dir, Owner::Discovery).unwrap().read::<Option<String>>("discovery_last_day").unwrap();
        assert_eq!(day.as_deref(), Some("2026-03-02"));
        assert!(Owner::Outbox.path(&dir).exists());
        assert!(!dir.legacy_state().exists());
        let kept: Vec<_> = std::fs::read_dir(dir.sentinel_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("state.json.split-"))
            .collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(std::fs::read(&kept[0]).unwrap(), legacy, "kept byte for byte");

        // A second split finds nothing to do; a section already in place is never overwritten.
        std::fs::write(dir.legacy_state(), br#"{"policy": {"multiplier": 0.9}}"#).unwrap();
        let (v, _) = open(&dir, Owner::Policy).unwrap().read::<serde_json::Value>("policy").unwrap();
        assert_eq!(v["multiplier"], 0.5);
    }
}
