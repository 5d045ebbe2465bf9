//! The outbox in the state database: a row per waiting message and a row per dead letter, so
//! queueing, leasing, settling or burying one message writes that message's rows and the
//! index entries that point at them, whatever else waits. The rules are [`Outbox`]'s; the
//! columns beside each row's JSON are what the queries select on.
//!
//! An `outbox.json` of an earlier version is imported once by the first writer (see
//! [`SqliteOutbox::open`]) and kept as `outbox.json.migrated`.

use super::{DeadLetter, Leased, Levels, Outbox, OutboxEntry, OutboxStore, Settled, DEAD_KEPT, SECTION};
use crate::data_dir::DataDir;
use crate::store::db::{Database, DbError};
use crate::store::owners::{self, Owner};
use crate::store::{JsonStateStore, StoreError};
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Transaction};
use std::path::Path;
use std::sync::Arc;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS outbox_waiting (
    seq INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL,
    target TEXT NOT NULL,
    content_hash INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    expires_at INTEGER,
    lease_until INTEGER,
    entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_waiting_same ON outbox_waiting (target, content_hash);
CREATE INDEX IF NOT EXISTS outbox_waiting_next ON outbox_waiting (next_attempt_at);
CREATE INDEX IF NOT EXISTS outbox_waiting_expires ON outbox_waiting (expires_at);
CREATE INDEX IF NOT EXISTS outbox_waiting_id ON outbox_waiting (delivery_id);
CREATE TABLE IF NOT EXISTS outbox_dead (
    seq INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL,
    letter TEXT NOT NULL
);
";

/// The outbox's rows in the state database.
#[derive(Debug, Clone)]
pub struct SqliteOutbox {
    db: Arc<Database>,
}

impl SqliteOutbox {
    /// The outbox in `db`, for a writer: its tables made, and the `outbox.json` an earlier
    /// version kept at `legacy` imported into them (then kept as `outbox.json.migrated`).
    pub fn open(db: Arc<Database>, legacy: &Path) -> Result<Self, StoreError> {
        db.ensure_schema(SCHEMA)?;
        let outbox = SqliteOutbox { db };
        outbox.import(legacy)?;
        Ok(outbox)
    }

    /// The outbox in a database opened only to read (its tables may not exist yet).
    pub fn read_only(db: Arc<Database>) -> Self {
        SqliteOutbox { db }
    }

    fn import(&self, legacy: &Path) -> Result<(), StoreError> {
        if !legacy.exists() {
            return Ok(());
        }
        // Read as any state file is: a corrupt one is kept aside and reads as empty.
        let (old, _) = JsonStateStore::new(legacy).read::<Outbox>(SECTION)?;
        let (waiting, dead) = (old.entries.len(), old.dead.len());
        self.db.write(|tx| {
            for e in &old.entries {
                if !has_id(tx, &self.db, &e.text.delivery_id)? {
                    insert_waiting(tx, &self.db, e)?;
                }
            }
            for d in &old.dead {
                insert_dead(tx, &self.db, d)?;
            }
            trim_dead(tx, &self.db)
        })?;
        if legacy.exists() {
            let kept = crate::store::sections::migrated_name(legacy);
            std::fs::rename(legacy, &kept).map_err(|source| StoreError::Io { path: legacy.to_owned(), source })?;
            tracing::info!(
                "imported the outbox ({waiting} waiting, {dead} dead letters) from {} into {}; the old file is kept as {}",
                legacy.display(),
                self.db.path().display(),
                kept.display()
            );
        }
        Ok(())
    }

    /// Reads through `f`, or nothing when the tables are not there yet (a read-only view of a
    /// database no writer has given an outbox).
    fn read<R: Default>(&self, f: impl FnOnce(&rusqlite::Connection) -> Result<R, DbError>) -> Result<R, StoreError> {
        if !self.db.has_table("outbox_dead")? {
            return Ok(R::default());
        }
        Ok(self.db.read(f)?)
    }
}

/// The outbox of `dir` for a writer (a command that drops a message, say): the database
/// opened (made if need be) and an earlier version's file imported.
pub fn open_in(dir: &DataDir) -> Result<SqliteOutbox, StoreError> {
    owners::split(dir)?;
    SqliteOutbox::open(Database::shared(&dir.state_db())?, &Owner::Outbox.path(dir))
}

/// The outbox of `dir` as a command that only reads sees it, with a note when it cannot be
/// read: an earlier version's file while no writer has imported it, else the database's rows
/// (empty when there is no database). Nothing is created, moved or written.
pub fn peek_in(dir: &DataDir) -> Result<(Outbox, Option<String>), StoreError> {
    if let Some(legacy) = owners::unimported(dir, Owner::Outbox) {
        return legacy.peek::<Outbox>(SECTION);
    }
    let Some(db) = Database::open_read_only(&dir.state_db())? else { return Ok((Outbox::default(), None)) };
    match SqliteOutbox::read_only(Arc::new(db)).snapshot() {
        Err(StoreError::Db(e)) => match crate::store::db::corrupt_note(&e) {
            Some(note) => Ok((Outbox::default(), Some(note))),
            None => Err(e.into()),
        },
        other => other.map(|o| (o, None)),
    }
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn target_of(e: &OutboxEntry) -> String {
    format!("{}\u{1f}{}", e.text.channel, e.text.chat_id)
}

fn hash_of(e: &OutboxEntry) -> i64 {
    crate::store::fnv1a(e.text.content.as_bytes()) as i64
}

fn json<T: serde::Serialize>(db: &Database, value: &T) -> Result<String, DbError> {
    serde_json::to_string(value).map_err(|e| db.decode(e))
}

fn has_id(tx: &Transaction, db: &Database, id: &str) -> Result<bool, DbError> {
    tx.query_row("SELECT 1 FROM outbox_waiting WHERE delivery_id = ?1 LIMIT 1", [id], |_| Ok(()))
        .optional()
        .map(|r| r.is_some())
        .map_err(|e| db.error(e))
}

fn insert_waiting(tx: &Transaction, db: &Database, e: &OutboxEntry) -> Result<(), DbError> {
    let entry = json(db, e)?;
    tx.prepare_cached(
        "INSERT INTO outbox_waiting (delivery_id, target, content_hash, next_attempt_at, expires_at, lease_until, entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            e.text.delivery_id,
            target_of(e),
            hash_of(e),
            ms(e.next_attempt_at),
            e.expires_at.map(ms),
            e.lease.map(|(_, until)| ms(until)),
            entry,
        ])
    })
    .map(|_| ())
    .map_err(|e| db.error(e))
}

/// Rewrites a waiting entry's row (found by `seq`).
fn update_waiting(tx: &Transaction, db: &Database, seq: i64, e: &OutboxEntry) -> Result<(), DbError> {
    let entry = json(db, e)?;
    tx.prepare_cached("UPDATE outbox_waiting SET next_attempt_at = ?2, lease_until = ?3, entry = ?4 WHERE seq = ?1")
        .and_then(|mut s| s.execute(params![seq, ms(e.next_attempt_at), e.lease.map(|(_, u)| ms(u)), entry]))
        .map(|_| ())
        .map_err(|e| db.error(e))
}

fn insert_dead(tx: &Transaction, db: &Database, d: &DeadLetter) -> Result<(), DbError> {
    let letter = json(db, d)?;
    tx.prepare_cached("INSERT INTO outbox_dead (delivery_id, letter) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![d.entry.text.delivery_id, letter]))
        .map(|_| ())
        .map_err(|e| db.error(e))
}

/// Keeps the newest [`DEAD_KEPT`] dead letters.
fn trim_dead(tx: &Transaction, db: &Database) -> Result<(), DbError> {
    tx.prepare_cached(
        "DELETE FROM outbox_dead WHERE seq <= (SELECT seq FROM outbox_dead ORDER BY seq DESC LIMIT 1 OFFSET ?1)",
    )
    .and_then(|mut s| s.execute([DEAD_KEPT as i64]))
    .map(|_| ())
    .map_err(|e| db.error(e))
}

fn bury(tx: &Transaction, db: &Database, seq: i64, letter: &DeadLetter) -> Result<(), DbError> {
    tracing::warn!(delivery = %letter.entry.text.delivery_id, "outbox: dead letter: {}", letter.why);
    tx.execute("DELETE FROM outbox_waiting WHERE seq = ?1", [seq]).map_err(|e| db.error(e))?;
    insert_dead(tx, db, letter)?;
    trim_dead(tx, db)
}

/// The waiting rows `sql` selects (its first column the seq, its second the entry), decoded.
fn waiting(
    conn: &rusqlite::Connection,
    db: &Database,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<(i64, OutboxEntry)>, DbError> {
    let mut stmt = conn.prepare_cached(sql).map_err(|e| db.error(e))?;
    let rows = stmt.query_map(args, |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).map_err(|e| db.error(e))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, text) = row.map_err(|e| db.error(e))?;
        out.push((seq, serde_json::from_str(&text).map_err(|e| db.decode(e))?));
    }
    Ok(out)
}

/// Rows in queue order (oldest first).
fn in_order(mut rows: Vec<(i64, OutboxEntry)>) -> Vec<(i64, OutboxEntry)> {
    rows.sort_unstable_by_key(|(seq, _)| *seq);
    rows
}

impl OutboxStore for SqliteOutbox {
    fn admit(&self, entry: OutboxEntry, max: usize, now: DateTime<Utc>) -> Result<(), StoreError> {
        let (db, entry) = (&*self.db, entry.cut());
        Ok(db.write(|tx| {
            let same = waiting(
                tx,
                db,
                "SELECT seq, entry FROM outbox_waiting WHERE target = ?1 AND content_hash = ?2",
                params![target_of(&entry), hash_of(&entry)],
            )?;
            if same.iter().any(|(_, e)| e.is_same(&entry)) {
                return Ok(());
            }
            insert_waiting(tx, db, &entry)?;
            let count: i64 =
                tx.query_row("SELECT count(*) FROM outbox_waiting", [], |r| r.get(0)).map_err(|e| db.error(e))?;
            let over = (count as usize).saturating_sub(max.max(1));
            if over > 0 {
                let sql = "SELECT seq, entry FROM outbox_waiting ORDER BY seq LIMIT ?1";
                for (seq, oldest) in waiting(tx, db, sql, [over as i64])? {
                    let why = format!("the outbox holds at most {max}");
                    bury(tx, db, seq, &DeadLetter { entry: oldest, at: now, why })?;
                }
            }
            Ok(())
        })?)
    }

    fn refuse(&self, entry: OutboxEntry, at: DateTime<Utc>, why: String) -> Result<(), StoreError> {
        let db = &*self.db;
        tracing::warn!(delivery = %entry.text.delivery_id, "outbox: dead letter: {why}");
        Ok(db.write(|tx| {
            insert_dead(tx, db, &DeadLetter { entry, at, why })?;
            trim_dead(tx, db)
        })?)
    }

    fn has_work(&self, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let db = &*self.db;
        self.read(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM outbox_waiting
                     WHERE next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1))
                   OR EXISTS (SELECT 1 FROM outbox_waiting
                     WHERE expires_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1))",
                [ms(now)],
                |r| r.get(0),
            )
            .map_err(|e| db.error(e))
        })
    }

    fn lease(&self, now: DateTime<Utc>, pid: u32, until: DateTime<Utc>) -> Result<Leased, StoreError> {
        let db = &*self.db;
        Ok(db.write(|tx| {
            let mut leased = Leased::default();
            let free = "(lease_until IS NULL OR lease_until <= ?1)";
            // Through the index, then in queue order (an ORDER BY here would make SQLite walk
            // the whole table in that order instead of the index).
            let sql = format!("SELECT seq, entry FROM outbox_waiting WHERE expires_at <= ?1 AND {free}");
            for (seq, e) in in_order(waiting(tx, db, &sql, [ms(now)])?) {
                let why = e.expired_why(now);
                let letter = DeadLetter { entry: e, at: now, why };
                bury(tx, db, seq, &letter)?;
                leased.buried.push(letter);
            }
            let sql = format!("SELECT seq, entry FROM outbox_waiting WHERE next_attempt_at <= ?1 AND {free}");
            for (seq, mut e) in in_order(waiting(tx, db, &sql, [ms(now)])?) {
                e.lease = Some((pid, until));
                update_waiting(tx, db, seq, &e)?;
                leased.due.push(e);
            }
            Ok(leased)
        })?)
    }

    fn settle(&self, tries: Vec<Settled>, now: DateTime<Utc>) -> Result<(), StoreError> {
        let db = &*self.db;
        Ok(db.write(|tx| {
            for tried in tries {
                let id = match &tried {
                    Settled::Delivered(e) | Settled::Refused(e, _) | Settled::Failed(e) => &e.text.delivery_id,
                };
                let sql = "SELECT seq, entry FROM outbox_waiting WHERE delivery_id = ?1";
                let Some((seq, _)) = in_order(waiting(tx, db, sql, [id])?).into_iter().next() else { continue };
                match tried {
                    Settled::Delivered(_) => {
                        tx.execute("DELETE FROM outbox_waiting WHERE seq = ?1", [seq]).map_err(|e| db.error(e))?;
                    }
                    Settled::Refused(e, why) => {
                        let letter = DeadLetter {
                            entry: OutboxEntry { lease: None, ..e },
                            at: now,
                            why: format!("refused: {why}"),
                        };
                        bury(tx, db, seq, &letter)?;
                    }
                    Settled::Failed(e) => update_waiting(tx, db, seq, &OutboxEntry { lease: None, ..e })?,
                }
            }
            Ok(())
        })?)
    }

    fn make_due(&self, channels: &[String], now: DateTime<Utc>) -> Result<(), StoreError> {
        let db = &*self.db;
        Ok(db.write(|tx| {
            let mut rows = Vec::new();
            for channel in channels {
                let prefix = format!("{channel}\u{1f}");
                let sql = "SELECT seq, entry FROM outbox_waiting WHERE substr(target, 1, length(?1)) = ?1 AND next_attempt_at <> ?2";
                rows.extend(waiting(tx, db, sql, params![prefix, ms(now)])?);
            }
            for (seq, mut e) in rows {
                e.next_attempt_at = now;
                update_waiting(tx, db, seq, &e)?;
            }
            Ok(())
        })?)
    }

    fn snapshot(&self) -> Result<Outbox, StoreError> {
        let db = &*self.db;
        self.read(|c| {
            let entries = waiting(c, db, "SELECT seq, entry FROM outbox_waiting ORDER BY seq", [])?;
            let mut stmt = c.prepare_cached("SELECT letter FROM outbox_dead ORDER BY seq").map_err(|e| db.error(e))?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| db.error(e))?;
            let mut dead = Vec::new();
            for row in rows {
                dead.push(serde_json::from_str(&row.map_err(|e| db.error(e))?).map_err(|e| db.decode(e))?);
            }
            Ok(Outbox { entries: entries.into_iter().map(|(_, e)| e).collect(), dead })
        })
    }

    fn levels(&self) -> Result<Levels, StoreError> {
        let db = &*self.db;
        self.read(|c| {
            let count = |table: &str| {
                c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get::<_, i64>(0))
                    .map_err(|e| db.error(e))
            };
            Ok(Levels { waiting: count("outbox_waiting")? as u64, dead: count("outbox_dead")? as u64 })
        })
    }

    fn drop_id(&self, id: &str) -> Result<bool, StoreError> {
        let db = &*self.db;
        Ok(db.write(|tx| {
            let waiting =
                tx.execute("DELETE FROM outbox_waiting WHERE delivery_id = ?1", [id]).map_err(|e| db.error(e))?;
            let dead = tx.execute("DELETE FROM outbox_dead WHERE delivery_id = ?1", [id]).map_err(|e| db.error(e))?;
            Ok(waiting + dead > 0)
        })?)
    }

    fn drop_dead(&self) -> Result<usize, StoreError> {
        let db = &*self.db;
        Ok(db.write(|tx| tx.execute("DELETE FROM outbox_dead", []).map_err(|e| db.error(e)))?)
    }
}

#[cfg(test)]
mod tests;
