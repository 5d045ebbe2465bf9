//! Where the outbox is kept: the [`OutboxStore`] trait, one atomic step per method (a peer
//! process sees each step whole or not at all), and [`MemoryOutbox`], the rules of
//! [`Outbox`] kept in memory (for a test, or an engine that keeps nothing).

use super::{DeadLetter, Outbox, OutboxEntry};
use crate::store::StoreError;
use chrono::{DateTime, Utc};
#[cfg(any(test, feature = "testkit"))]
use std::sync::Mutex;

/// What a retry pass takes: the entries that expired (now dead letters), and the due ones it
/// leased.
#[derive(Debug, Default)]
pub struct Leased {
    pub buried: Vec<DeadLetter>,
    pub due: Vec<OutboxEntry>,
}

/// How a leased entry's try went (the entry as tried: routed elsewhere, attempts counted).
#[derive(Debug, Clone)]
pub enum Settled {
    /// Delivered: it leaves the outbox.
    Delivered(OutboxEntry),
    /// Refused for good: a dead letter, with why.
    Refused(OutboxEntry, String),
    /// Failed for now: it waits again (its lease given back) until its next attempt.
    Failed(OutboxEntry),
}

/// How many wait, and how many dead letters are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Levels {
    pub waiting: u64,
    pub dead: u64,
}

/// The outbox's keeper. Each method is one atomic step against every process on the data dir.
pub trait OutboxStore: Send + Sync {
    /// Queues `entry` unless the same text waits for the same target; past `max` waiting, the
    /// oldest becomes a dead letter.
    fn admit(&self, entry: OutboxEntry, max: usize, now: DateTime<Utc>) -> Result<(), StoreError>;
    /// `entry`, refused for good, as a dead letter.
    fn refuse(&self, entry: OutboxEntry, at: DateTime<Utc>, why: String) -> Result<(), StoreError>;
    /// Whether a retry at `now` has anything to do (read only).
    fn has_work(&self, now: DateTime<Utc>) -> Result<bool, StoreError>;
    /// Buries what expired and leases every due entry no live lease holds, until `until`.
    fn lease(&self, now: DateTime<Utc>, pid: u32, until: DateTime<Utc>) -> Result<Leased, StoreError>;
    /// Settles the tries of a pass; an entry dropped meanwhile stays dropped.
    fn settle(&self, tries: Vec<Settled>, now: DateTime<Utc>) -> Result<(), StoreError>;
    /// What waits for one of `channels` is due at `now`.
    fn make_due(&self, channels: &[String], now: DateTime<Utc>) -> Result<(), StoreError>;
    /// Everything: what waits (oldest first) and the dead letters (oldest first).
    fn snapshot(&self) -> Result<Outbox, StoreError>;
    fn levels(&self) -> Result<Levels, StoreError>;
    /// Drops the waiting entry or dead letter with this delivery id; whether there was one.
    fn drop_id(&self, id: &str) -> Result<bool, StoreError>;
    /// Drops every dead letter; how many.
    fn drop_dead(&self) -> Result<usize, StoreError>;
}

impl Outbox {
    /// The lease step of [`OutboxStore::lease`] on a value.
    pub fn lease(&mut self, now: DateTime<Utc>, pid: u32, until: DateTime<Utc>) -> Leased {
        let buried = self.expire(now);
        let mut due = Vec::new();
        for e in self.entries.iter_mut().filter(|e| e.is_free(now) && e.next_attempt_at <= now) {
            e.lease = Some((pid, until));
            due.push(e.clone());
        }
        Leased { buried, due }
    }

    /// The settle step of [`OutboxStore::settle`] on a value.
    pub fn settle(&mut self, tries: Vec<Settled>, now: DateTime<Utc>) {
        for tried in tries {
            let id = match &tried {
                Settled::Delivered(e) | Settled::Refused(e, _) | Settled::Failed(e) => e.text.delivery_id.clone(),
            };
            let Some(at) = self.entries.iter().position(|e| e.text.delivery_id == id) else { continue };
            match tried {
                Settled::Delivered(_) => {
                    self.entries.remove(at);
                }
                Settled::Refused(e, why) => {
                    self.entries.remove(at);
                    self.refused(OutboxEntry { lease: None, ..e }, now, format!("refused: {why}"));
                }
                Settled::Failed(e) => self.entries[at] = OutboxEntry { lease: None, ..e },
            }
        }
    }
}

/// The outbox in memory: the rules of [`Outbox`] under a mutex.
#[derive(Debug, Default)]
#[cfg(any(test, feature = "testkit"))]
pub struct MemoryOutbox(Mutex<Outbox>);

#[cfg(any(test, feature = "testkit"))]
impl MemoryOutbox {
    fn with<R>(&self, f: impl FnOnce(&mut Outbox) -> R) -> Result<R, StoreError> {
        Ok(f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner())))
    }
}

#[cfg(any(test, feature = "testkit"))]
impl OutboxStore for MemoryOutbox {
    fn admit(&self, entry: OutboxEntry, max: usize, now: DateTime<Utc>) -> Result<(), StoreError> {
        self.with(|o| o.admit(entry, max, now))
    }
    fn refuse(&self, entry: OutboxEntry, at: DateTime<Utc>, why: String) -> Result<(), StoreError> {
        self.with(|o| o.refused(entry, at, why))
    }
    fn has_work(&self, now: DateTime<Utc>) -> Result<bool, StoreError> {
        self.with(|o| o.has_work(now))
    }
    fn lease(&self, now: DateTime<Utc>, pid: u32, until: DateTime<Utc>) -> Result<Leased, StoreError> {
        self.with(|o| o.lease(now, pid, until))
    }
    fn settle(&self, tries: Vec<Settled>, now: DateTime<Utc>) -> Result<(), StoreError> {
        self.with(|o| o.settle(tries, now))
    }
    fn make_due(&self, channels: &[String], now: DateTime<Utc>) -> Result<(), StoreError> {
        self.with(|o| {
            o.entries.iter_mut().filter(|e| channels.contains(&e.text.channel)).for_each(|e| e.next_attempt_at = now)
        })
    }
    fn snapshot(&self) -> Result<Outbox, StoreError> {
        self.with(|o| o.clone())
    }
    fn levels(&self) -> Result<Levels, StoreError> {
        self.with(|o| Levels { waiting: o.entries.len() as u64, dead: o.dead.len() as u64 })
    }
    fn drop_id(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|o| o.drop_id(id))
    }
    fn drop_dead(&self) -> Result<usize, StoreError> {
        self.with(|o| std::mem::take(&mut o.dead).len())
    }
}
