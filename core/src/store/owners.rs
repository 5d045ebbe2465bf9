//! The state store's layout: one file per owner under `sentinel/state/`, each with its own
//! lock, so an operation costs what its owner holds (a long outbox never slows the gate) and
//! a peer holding one owner's lock delays no other. A data dir of the one-file layout
//! (`sentinel/state.json`) is split into these files the first time a process opens it.

use super::{JsonStateStore, StoreError};
use crate::data_dir::DataDir;
use std::path::{Path, PathBuf};

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
}

impl Owner {
    pub fn name(self) -> &'static str {
        match self {
            Owner::Policy => "policy",
            Owner::Injector => "injector",
            Owner::Defer => "defer",
            Owner::Outbox => "outbox",
            Owner::Discovery => "discovery",
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

    /// `sentinel/state/<owner>.json`
    pub fn path(self, dir: &DataDir) -> PathBuf {
        dir.sentinel_dir().join("state").join(format!("{}.json", self.name()))
    }
}

/// The store of one owner, after the one-file layout (if any) was split.
pub fn open(dir: &DataDir, owner: Owner) -> Result<JsonStateStore, StoreError> {
    split_legacy(&dir.legacy_state(), |section| Owner::of_section(section).path(dir))?;
    Ok(JsonStateStore::new(owner.path(dir)))
}

/// The store of one owner for a command that only reads: its file, or the one-file layout's
/// while that is not split yet (splitting is a write, left to a writer).
pub fn read_only(dir: &DataDir, owner: Owner) -> JsonStateStore {
    let (path, legacy) = (owner.path(dir), dir.legacy_state());
    JsonStateStore::new(if !path.exists() && legacy.exists() { legacy } else { path })
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
