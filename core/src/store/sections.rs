//! Named JSON sections as rows of the state database: a row per owner and section (the
//! gate's ledger and learned feedback, the inject and defer queues, discovery's guard and
//! pending menus, operator triggers, the decision cache and the day's brief). A
//! [`JsonStateStore`](super::JsonStateStore) on these rows keeps the rules it keeps on a file
//! (a section's unknown fields carried over, a change that changes nothing writes nothing, a
//! section of the wrong shape kept aside and reset), and each read-modify-write is one
//! `BEGIN IMMEDIATE` transaction: every process on the data dir sees one order of changes.
//!
//! An owner's JSON file of an earlier version is imported by the first writer that opens its
//! rows (a section already here is kept), then kept as `<file>.migrated`.

use super::db::{Database, DbError};
use super::{items, JsonStateStore, StoreError};
use rusqlite::{params, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS state_sections (
    owner TEXT NOT NULL,
    section TEXT NOT NULL,
    value TEXT NOT NULL,
    rev INTEGER NOT NULL,
    PRIMARY KEY (owner, section)
) WITHOUT ROWID;
";

const TABLE: &str = "state_sections";

/// One section as read: its JSON text (none when absent) and its owner's revision.
pub(super) type Read = (Option<String>, Option<i64>);

/// The rows of one owner.
#[derive(Debug, Clone)]
pub struct Rows {
    db: Arc<Database>,
    owner: &'static str,
    read_only: bool,
    /// The section and list field whose items are rows of their own (see [`items`]).
    items: Option<(&'static str, &'static str)>,
}

impl Rows {
    /// `owner`'s rows in `db`, for a writer: the table made, and the file an earlier version
    /// kept at `legacy` imported (then kept as `<file>.migrated`).
    pub fn open(db: Arc<Database>, owner: &'static str, legacy: &Path) -> Result<Rows, StoreError> {
        db.ensure_schema(SCHEMA)?;
        db.ensure_schema(items::SCHEMA)?;
        let rows = Rows { db, owner, read_only: false, items: None };
        rows.import(legacy)?;
        Ok(rows)
    }

    /// `owner`'s rows in a database opened only to read (the table may not exist yet).
    pub fn read_only(db: Arc<Database>, owner: &'static str) -> Rows {
        Rows { db, owner, read_only: true, items: None }
    }

    /// Keeps the list `field` of `section` as a row an item: a change to it writes the items
    /// that changed (see [`items`]).
    pub fn with_items(self, section: &'static str, field: &'static str) -> Rows {
        Rows { items: Some((section, field)), ..self }
    }

    pub fn owner(&self) -> &'static str {
        self.owner
    }

    pub(super) fn path(&self) -> &Path {
        self.db.path()
    }

    /// Whether there is nothing to read: a read-only view of a database with no such table.
    fn absent(&self) -> Result<bool, DbError> {
        Ok(self.read_only && !self.db.has_table(TABLE)?)
    }

    /// One section (its items put back) and the owner's revision, from one snapshot.
    pub(super) fn read(&self, section: &str) -> Result<Read, StoreError> {
        if self.absent()? {
            return Ok((None, None));
        }
        let db = &self.db;
        let split = self.field(section).is_some() && (!self.read_only || db.has_table(items::TABLE)?);
        db.try_read(|c| {
            let text = value(c, db, self.owner, section)?;
            let text = match split {
                true => items::compose(text, &items::read(c, db, self.owner, section)?),
                false => text,
            };
            Ok((text, revision(c, db, self.owner)?))
        })
    }

    /// The list field of `section` kept as rows, if it has one.
    fn field(&self, section: &str) -> Option<&'static str> {
        self.items.filter(|(s, _)| *s == section).map(|(_, field)| field)
    }

    /// The last revision written to this owner's rows (none before the first).
    pub(super) fn revision(&self) -> Result<Option<i64>, StoreError> {
        if self.absent()? {
            return Ok(None);
        }
        Ok(self.db.read(|c| revision(c, &self.db, self.owner))?)
    }

    /// One read-modify-write of a section in one transaction: `f` gets its text (none when
    /// absent) and returns the text to keep (none: leave it as it is) and its result.
    pub(super) fn transact<R>(
        &self,
        section: &str,
        f: impl FnOnce(Option<String>) -> Result<(Option<String>, R), StoreError>,
    ) -> Result<R, StoreError> {
        let db = &self.db;
        db.try_write(|tx| {
            let text = value(tx, db, self.owner, section)?;
            let Some(field) = self.field(section) else {
                let (new, out) = f(text)?;
                if let Some(new) = new {
                    put(tx, db, self.owner, section, &new)?;
                }
                return Ok(out);
            };
            let stored = items::read(tx, db, self.owner, section)?;
            let (new, out) = f(items::compose(text.clone(), &stored))?;
            let Some(new) = new else { return Ok(out) };
            match items::split(&new, field).map(|split| (field, split)) {
                Some((field, (rest, list))) => {
                    let changed = items::write(tx, db, (self.owner, section, field), &stored, &list)?;
                    // Written again when only the items changed: the owner's revision moves on.
                    if changed || text.as_deref() != Some(rest.as_str()) {
                        put(tx, db, self.owner, section, &rest)?;
                    }
                }
                None => put(tx, db, self.owner, section, &new)?,
            }
            Ok(out)
        })
    }

    /// Imports the sections of an earlier version's file (a section already here is kept),
    /// then keeps the file as `<file>.migrated`. Under the file's lock, so two processes
    /// import it once; a corrupt file is kept aside like any other and nothing is imported.
    fn import(&self, legacy: &Path) -> Result<(), StoreError> {
        if !legacy.exists() {
            return Ok(());
        }
        let old = JsonStateStore::new(legacy);
        old.with_root(|root| {
            let db = &self.db;
            db.try_write(|tx| {
                let sql = "SELECT count(*) FROM state_sections WHERE owner = ?1 AND section = ?2";
                for (section, value) in root {
                    let here: i64 =
                        tx.query_row(sql, params![self.owner, section], |r| r.get(0)).map_err(|e| db.error(e))?;
                    if here == 0 {
                        put(tx, db, self.owner, section, &value.to_string())?;
                    }
                }
                Ok::<_, StoreError>(())
            })?;
            if !legacy.exists() {
                return Ok(());
            }
            let kept = migrated_name(legacy);
            std::fs::rename(legacy, &kept).map_err(|e| old.io(e))?;
            tracing::info!(
                "imported {} ({} sections) into {}; the old file is kept as {}",
                legacy.display(),
                root.len(),
                self.db.path().display(),
                kept.display()
            );
            Ok(())
        })
    }
}

/// Every owner's sections in `db` (owner, section, JSON text), for a person or a script.
pub fn everything(db: &Database) -> Result<Vec<(String, String, String)>, StoreError> {
    if !db.has_table(TABLE)? {
        return Ok(Vec::new());
    }
    let split = db.has_table(items::TABLE)?;
    Ok(db.read(|c| {
        let sql = "SELECT owner, section, value FROM state_sections ORDER BY owner, section";
        let mut stmt = c.prepare(sql).map_err(|e| db.error(e))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(|e| db.error(e))?;
        let rows: Vec<(String, String, String)> = rows.collect::<Result<_, _>>().map_err(|e| db.error(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for (owner, section, text) in rows {
            let text = match split {
                true => items::compose(Some(text.clone()), &items::read(c, db, &owner, &section)?).unwrap_or(text),
                false => text,
            };
            out.push((owner, section, text));
        }
        Ok(out)
    })?)
}

/// Drops every section of `owner` in `db` (a dry run's copy forgets the decision cache).
pub fn forget(db: &Database, owner: &str) -> Result<(), DbError> {
    if !db.has_table(TABLE)? {
        return Ok(());
    }
    let split = db.has_table(items::TABLE)?;
    db.write(|tx| {
        tx.execute("DELETE FROM state_sections WHERE owner = ?1", [owner]).map_err(|e| db.error(e))?;
        if split {
            tx.execute("DELETE FROM state_items WHERE owner = ?1", [owner]).map_err(|e| db.error(e))?;
        }
        Ok(())
    })
}

/// `<file>.migrated`, or `<file>.migrated-<UTC time>` when that name is taken.
pub fn migrated_name(legacy: &Path) -> PathBuf {
    let name = legacy.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let kept = legacy.with_file_name(format!("{name}.migrated"));
    if !kept.exists() {
        return kept;
    }
    legacy.with_file_name(format!("{name}.migrated-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")))
}

/// One section's text (none when absent).
fn value(c: &rusqlite::Connection, db: &Database, owner: &str, section: &str) -> Result<Option<String>, DbError> {
    let sql = "SELECT value FROM state_sections WHERE owner = ?1 AND section = ?2";
    c.query_row(sql, params![owner, section], |r| r.get::<_, String>(0)).optional().map_err(|e| db.error(e))
}

fn revision(c: &rusqlite::Connection, db: &Database, owner: &str) -> Result<Option<i64>, DbError> {
    let sql = "SELECT max(rev) FROM state_sections WHERE owner = ?1";
    c.query_row(sql, [owner], |r| r.get::<_, Option<i64>>(0)).map_err(|e| db.error(e))
}

/// Writes a section with the next revision of the table (so any write of an owner moves its
/// revision forward, whichever process made it).
fn put(tx: &rusqlite::Transaction, db: &Database, owner: &str, section: &str, value: &str) -> Result<(), DbError> {
    let sql = "INSERT INTO state_sections (owner, section, value, rev)
               VALUES (?1, ?2, ?3, (SELECT coalesce(max(rev), 0) + 1 FROM state_sections))
               ON CONFLICT (owner, section) DO UPDATE SET value = excluded.value, rev = excluded.rev";
    tx.execute(sql, params![owner, section, value]).map(|_| ()).map_err(|e| db.error(e))
}
