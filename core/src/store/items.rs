//! One list field of a section kept as rows of its own, an item a row (the gate's ledger: a
//! fire a row), so a change to the list writes the items that changed, not the whole list.
//!
//! The owner reads and writes the section as one JSON object as before: on the way in the
//! items are put back into the field, in order; on the way out the field is taken out and
//! compared with the rows read. The rows of items no longer there are deleted and new items are
//! appended. An item inserted anywhere but at the end rewrites the items after it, so the rows'
//! order stays the list's. A section an earlier version wrote with the list inline is read as
//! it is and split at its next write.

use super::db::{Database, DbError};
use rusqlite::params;
use serde_json::Value;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS state_items (
    seq INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    section TEXT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS state_items_of ON state_items (owner, section, seq);
";

pub(super) const TABLE: &str = "state_items";

/// The items of a section as stored: the field they belong to, and each row's key and text.
#[derive(Debug, Default)]
pub(super) struct Stored {
    pub field: Option<String>,
    pub rows: Vec<(i64, String)>,
}

/// The rows of `owner`'s `section`, in order.
pub(super) fn read(c: &rusqlite::Connection, db: &Database, owner: &str, section: &str) -> Result<Stored, DbError> {
    let sql = "SELECT seq, field, value FROM state_items WHERE owner = ?1 AND section = ?2 ORDER BY seq";
    let mut stmt = c.prepare_cached(sql).map_err(|e| db.error(e))?;
    let rows = stmt
        .query_map(params![owner, section], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })
        .map_err(|e| db.error(e))?;
    let mut stored = Stored::default();
    for row in rows {
        let (seq, field, value) = row.map_err(|e| db.error(e))?;
        stored.field = Some(field);
        stored.rows.push((seq, value));
    }
    Ok(stored)
}

/// The section's text with its items put back into their field (the text as it is when
/// there are none: a section written before the split keeps its list inline).
pub(super) fn compose(text: Option<String>, stored: &Stored) -> Option<String> {
    let Some(field) = &stored.field else { return text };
    let mut object = match text.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(o))) => o,
        // Not an object: left for the owner to find unreadable, as it is.
        Some(_) => return text,
        None => Default::default(),
    };
    let items = stored.rows.iter().map(|(_, v)| serde_json::from_str(v).unwrap_or(Value::Null)).collect();
    object.insert(field.clone(), Value::Array(items));
    Some(Value::Object(object).to_string())
}

/// The section's text without `field`, and the field's items as texts; `None` when the text
/// is not an object with a list there (then it is kept whole).
pub(super) fn split(text: &str, field: &str) -> Option<(String, Vec<String>)> {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else { return None };
    let items = match object.remove(field) {
        Some(Value::Array(items)) => items,
        None => Vec::new(),
        Some(_) => return None,
    };
    Some((Value::Object(object).to_string(), items.iter().map(Value::to_string).collect()))
}

/// Brings the rows of `owner`'s `section` from `stored` to `items`: the rows of items gone
/// are deleted, new ones appended (see the module). Whether any row changed.
pub(super) fn write(
    tx: &rusqlite::Transaction,
    db: &Database,
    (owner, section, field): (&str, &str, &str),
    stored: &Stored,
    items: &[String],
) -> Result<bool, DbError> {
    let mut kept = 0;
    let mut gone = Vec::new();
    for (seq, value) in &stored.rows {
        if stored.field.as_deref() == Some(field) && items.get(kept) == Some(value) {
            kept += 1;
        } else {
            gone.push(*seq);
        }
    }
    let mut delete = tx.prepare_cached("DELETE FROM state_items WHERE seq = ?1").map_err(|e| db.error(e))?;
    for seq in &gone {
        delete.execute([seq]).map_err(|e| db.error(e))?;
    }
    let sql = "INSERT INTO state_items (owner, section, field, value) VALUES (?1, ?2, ?3, ?4)";
    let mut insert = tx.prepare_cached(sql).map_err(|e| db.error(e))?;
    for value in &items[kept..] {
        insert.execute(params![owner, section, field, value]).map_err(|e| db.error(e))?;
    }
    Ok(!gone.is_empty() || kept < items.len())
}
