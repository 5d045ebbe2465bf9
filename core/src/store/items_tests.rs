use super::db::Database;
use super::sections::{self, Rows};
use super::JsonStateStore;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// A section with a long list, like the gate's ledger.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Ledger {
    fires: Vec<Fire>,
    multiplier: f64,
}

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Fire {
    at: u64,
    topic: String,
}

fn fire(at: u64) -> Fire {
    Fire { at, topic: format!("the topic of fire number {at}, at the length a real one has") }
}

/// The ledger's rows on a connection of their own, its fires a row each.
fn ledger(dir: &Path) -> JsonStateStore {
    let (db, _) = Database::open(&dir.join("state.db")).unwrap();
    let rows = Rows::open(Arc::new(db), "policy", &dir.join("policy.json")).unwrap();
    JsonStateStore::on_rows(rows.with_items("ledger", "fires"))
}

/// Pages written since the log was last emptied.
fn frames(dir: &Path) -> u64 {
    let wal = std::fs::metadata(dir.join("state.db-wal")).map(|m| m.len()).unwrap_or(0);
    wal.saturating_sub(32) / (1024 + 24)
}

fn checkpoint(dir: &Path) {
    let c = rusqlite::Connection::open(dir.join("state.db")).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
}

/// One fire more among 2,000 writes a few pages, not the 2,000 fires; the list reads back
/// whole and in order after removals at the front, in the middle and an insertion.
#[test]
fn a_fire_more_among_thousands_writes_that_fire() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ledger(tmp.path());
    store.update("ledger", |l: &mut Ledger| l.fires = (0..2000).map(fire).collect()).unwrap();
    checkpoint(tmp.path());
    store.update("ledger", |l: &mut Ledger| l.fires.push(fire(2000))).unwrap();
    let written = frames(tmp.path());
    assert!(written <= 8, "{written} pages for one fire among 2,000 (the list is over 200 pages)");
    let mut want: Vec<Fire> = (0..=2000).map(fire).collect();
    store
        .update("ledger", |l: &mut Ledger| {
            l.fires.drain(..10);
            l.fires.remove(500);
            l.fires.insert(1000, fire(9999));
            l.multiplier = 0.5;
        })
        .unwrap();
    want.drain(..10);
    want.remove(500);
    want.insert(1000, fire(9999));
    let read = ledger(tmp.path()).read::<Ledger>("ledger").unwrap().0;
    assert_eq!((read.fires, read.multiplier), (want, 0.5));
}

/// A ledger an earlier version wrote with its fires inline is read as it is and split at the
/// next write; a look inside shows the fires in the section; unknown fields stay.
#[test]
fn an_inline_list_is_read_then_split_and_shown_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ledger(tmp.path());
    let (db, _) = Database::open(&tmp.path().join("state.db")).unwrap();
    let inline = serde_json::json!({"fires": [fire(1), fire(2)], "multiplier": 1.0, "later": "kept"});
    db.write(|tx| {
        let sql = "INSERT INTO state_sections (owner, section, value, rev) VALUES ('policy', 'ledger', ?1, 1)";
        tx.execute(sql, [inline.to_string()]).map_err(|e| db.error(e))
    })
    .unwrap();
    assert_eq!(store.read::<Ledger>("ledger").unwrap().0.fires, [fire(1), fire(2)]);
    let stamp = store.stamp();
    store.update("ledger", |l: &mut Ledger| l.fires.push(fire(3))).unwrap();
    assert_ne!(store.stamp(), stamp, "the revision moves on");
    let in_row: String = db
        .read(|c| {
            c.query_row("SELECT value FROM state_sections WHERE section = 'ledger'", [], |r| r.get(0))
                .map_err(|e| db.error(e))
        })
        .unwrap();
    assert!(!in_row.contains("fires"), "{in_row}");
    let all = sections::everything(&db).unwrap();
    let shown: serde_json::Value = serde_json::from_str(&all[0].2).unwrap();
    assert_eq!(shown, serde_json::json!({"fires": [fire(1), fire(2), fire(3)], "multiplier": 1.0, "later": "kept"}));
    // Only the list changed: the section's own row is written again all the same, so a peer
    // that caches by revision sees the new fire.
    let stamp = store.stamp();
    store.update("ledger", |l: &mut Ledger| l.fires.remove(0)).unwrap();
    assert_ne!(store.stamp(), stamp);
    assert_eq!(ledger(tmp.path()).read::<Ledger>("ledger").unwrap().0.fires, [fire(2), fire(3)]);
}
