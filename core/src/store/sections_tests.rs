use super::db::Database;
use super::sections::{self, Rows};
use super::JsonStateStore;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Counter {
    n: u64,
}

/// An owner's rows on a connection of their own, as another process would open them.
fn rows(dir: &Path, owner: &'static str) -> JsonStateStore {
    let (db, _) = Database::open(&dir.join("state.db")).unwrap();
    JsonStateStore::on_rows(Rows::open(Arc::new(db), owner, &dir.join(format!("{owner}.json"))).unwrap())
}

#[test]
fn a_section_is_a_row_an_unchanged_update_writes_nothing_and_unknown_fields_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let store = rows(tmp.path(), "policy");
    assert_eq!(store.read::<Counter>("c").unwrap(), (Counter::default(), None));
    store.update("c", |c: &mut Counter| c.n = 0).unwrap();
    assert_eq!(store.stamp(), None, "a default kept as default writes nothing");
    store.update("c", |c: &mut Counter| c.n = 3).unwrap();
    let stamp = store.stamp().expect("written");
    store.update("c", |c: &mut Counter| c.n = 3).unwrap();
    assert_eq!(store.stamp(), Some(stamp), "the same again writes nothing");

    // A field this version does not know (written by a newer one) is kept through an update.
    let (db, _) = Database::open(&tmp.path().join("state.db")).unwrap();
    db.write(|tx| {
        tx.execute("UPDATE state_sections SET value = '{\"n\": 3, \"later\": [1]}' WHERE owner = 'policy'", [])
            .map_err(|e| db.error(e))
    })
    .unwrap();
    store.update("c", |c: &mut Counter| c.n += 1).unwrap();
    let all = sections::everything(&db).unwrap();
    assert_eq!(all.len(), 1);
    let kept: serde_json::Value = serde_json::from_str(&all[0].2).unwrap();
    assert_eq!(kept, serde_json::json!({"n": 4, "later": [1]}));
    assert_ne!(store.stamp(), Some(stamp), "a write moves the revision");
}

#[test]
fn concurrent_read_modify_writes_from_many_connections_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    rows(tmp.path(), "policy");
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let dir = tmp.path().to_owned();
            std::thread::spawn(move || {
                let store = rows(&dir, "policy");
                for _ in 0..50 {
                    store.update("c", |c: &mut Counter| c.n += 1).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(rows(tmp.path(), "policy").read::<Counter>("c").unwrap().0.n, 200);
}

#[test]
fn an_owners_file_of_an_earlier_version_is_imported_once_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let legacy = tmp.path().join("defer.json");
    let old = br#"{"defer": {"n": 7}, "other": {"n": 1}}"#;
    std::fs::write(&legacy, old).unwrap();
    let store = rows(tmp.path(), "defer");
    assert_eq!(store.read::<Counter>("defer").unwrap().0.n, 7);
    assert_eq!(store.read::<Counter>("other").unwrap().0.n, 1);
    assert!(!legacy.exists());
    assert_eq!(std::fs::read(tmp.path().join("defer.json.migrated")).unwrap(), old, "kept byte for byte");

    // A file that turns up again never overwrites what the database holds.
    store.update("defer", |c: &mut Counter| c.n = 8).unwrap();
    std::fs::write(&legacy, br#"{"defer": {"n": 1}}"#).unwrap();
    let again = rows(tmp.path(), "defer");
    assert_eq!(again.read::<Counter>("defer").unwrap().0.n, 8);
    assert!(!legacy.exists(), "kept under another name");
}

#[test]
fn a_section_of_the_wrong_shape_is_kept_aside_once_reset_and_peeked_without_a_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let store = rows(tmp.path(), "policy");
    store.update("c", |c: &mut Counter| c.n = 1).unwrap();
    let (db, _) = Database::open(&tmp.path().join("state.db")).unwrap();
    let bad = "UPDATE state_sections SET value = '{\"n\": \"many\"}'";
    db.write(|tx| tx.execute(bad, []).map_err(|e| db.error(e))).unwrap();

    let aside = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
            .count()
    };
    let (peeked, note) = store.peek::<Counter>("c").unwrap();
    assert_eq!(peeked, Counter::default());
    assert!(note.is_some_and(|n| n.contains("unreadable")));
    assert_eq!(aside(tmp.path()), 0, "a peek keeps nothing aside");

    assert_eq!(store.read::<Counter>("c").unwrap().0, Counter::default());
    assert_eq!(store.read::<Counter>("c").unwrap().0, Counter::default());
    assert_eq!(aside(tmp.path()), 1, "kept once per content");
    assert_eq!(store.take_notices().len(), 1, "reported once");
    store.update("c", |c: &mut Counter| c.n += 1).unwrap();
    assert_eq!(store.read::<Counter>("c").unwrap().0.n, 1, "reset, then updated");
}

#[test]
fn a_read_only_view_of_a_database_without_the_rows_reads_defaults_and_makes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    {
        let (db, _) = Database::open(&path).unwrap();
        db.ensure_schema("CREATE TABLE IF NOT EXISTS other (x INTEGER)").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let db = Database::open_read_only(&path).unwrap().unwrap();
    let store = JsonStateStore::on_rows(Rows::read_only(Arc::new(db), "policy"));
    assert_eq!(store.read::<Counter>("c").unwrap(), (Counter::default(), None));
    assert_eq!(store.peek::<Counter>("c").unwrap(), (Counter::default(), None));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
