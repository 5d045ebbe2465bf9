//! [`Keeper`]: the store trait in front of one owner's state (the gate's ledger, the inject
//! queues, the defer heap), so the actors never name the backend that keeps it.
//!
//! The state database is one backend ([`Section`]: a section of a [`JsonStateStore`] on the
//! owner's rows; the same type also keeps it in a JSON file); [`MemoryKeeper`] is the test
//! double, the same rules in memory. A server-grade backend is one more implementation of
//! [`Keeper`]: each change is one atomic read-modify-write that every process sharing the
//! state sees whole, and a [`Stamp`] that moves with every change.

use super::{JsonStateStore, Stamp, StoreError};
use serde::{de::DeserializeOwned, Serialize};
use std::marker::PhantomData;
#[cfg(any(test, feature = "testkit"))]
use std::sync::Mutex;

/// Where one owner's state of type `T` is kept.
pub trait Keeper<T>: Send + Sync {
    /// What is kept now, and the version it was read at (the default, and none, before the
    /// first change).
    fn load(&self) -> Result<(T, Option<Stamp>), StoreError>;
    /// One atomic read-modify-write: `f` runs once, on what is kept at that moment, and its
    /// change is kept (durably) before this returns. A change that changes nothing writes
    /// nothing.
    fn change(&self, f: &mut dyn FnMut(&mut T)) -> Result<(), StoreError>;
    /// The version kept now: it moves whenever any process changes the state, so a reader can
    /// skip loading what it already has.
    fn stamp(&self) -> Option<Stamp>;
}

/// [`Keeper::change`] with a result: `f` runs once, and what it returns is returned.
pub fn change<T, R>(keeper: &dyn Keeper<T>, f: impl FnOnce(&mut T) -> R) -> Result<R, StoreError> {
    let (mut f, mut out) = (Some(f), None);
    keeper.change(&mut |state| {
        if let Some(f) = f.take() {
            out = Some(f(state));
        }
    })?;
    Ok(out.expect("Keeper::change runs its closure once"))
}

/// One section of a [`JsonStateStore`]: its owner's rows in the state database (or a JSON
/// file), with every rule that store keeps (unknown fields carried over, a section of the wrong
/// shape kept aside).
#[derive(Debug)]
pub struct Section<T> {
    store: JsonStateStore,
    name: &'static str,
    kind: PhantomData<fn() -> T>,
}

impl<T> Section<T> {
    pub fn new(store: JsonStateStore, name: &'static str) -> Self {
        Section { store, name, kind: PhantomData }
    }
}

impl<T: Serialize + DeserializeOwned + Default> Keeper<T> for Section<T> {
    fn load(&self) -> Result<(T, Option<Stamp>), StoreError> {
        self.store.read(self.name)
    }

    fn change(&self, f: &mut dyn FnMut(&mut T)) -> Result<(), StoreError> {
        self.store.update(self.name, f)
    }

    fn stamp(&self) -> Option<Stamp> {
        self.store.stamp()
    }
}

/// The test double: the state in memory, a revision counting its changes. A change that
/// leaves the state as it was (compared as JSON, as the database compares it) keeps the
/// revision, so a reader that skips an unchanged stamp behaves as it does on the database.
#[cfg(any(test, feature = "testkit"))]
#[derive(Debug, Default)]
pub struct MemoryKeeper<T> {
    kept: Mutex<(T, i64)>,
}

#[cfg(any(test, feature = "testkit"))]
impl<T> MemoryKeeper<T> {
    pub fn new(state: T) -> Self {
        MemoryKeeper { kept: Mutex::new((state, 0)) }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, (T, i64)> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(any(test, feature = "testkit"))]
impl<T: Serialize + Clone + Send> Keeper<T> for MemoryKeeper<T> {
    fn load(&self) -> Result<(T, Option<Stamp>), StoreError> {
        let kept = self.kept();
        Ok((kept.0.clone(), (kept.1 > 0).then(|| Stamp::of_revision(kept.1))))
    }

    fn change(&self, f: &mut dyn FnMut(&mut T)) -> Result<(), StoreError> {
        let mut kept = self.kept();
        let before = serde_json::to_value(&kept.0).ok();
        f(&mut kept.0);
        if serde_json::to_value(&kept.0).ok() != before {
            kept.1 += 1;
        }
        Ok(())
    }

    fn stamp(&self) -> Option<Stamp> {
        let revision = self.kept().1;
        (revision > 0).then(|| Stamp::of_revision(revision))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
    struct Queue {
        items: Vec<u32>,
    }

    /// The rules every keeper holds, run against each.
    fn holds_the_rules(keeper: &dyn Keeper<Queue>) {
        assert_eq!(keeper.load().unwrap(), (Queue::default(), None), "nothing kept yet");
        assert_eq!(keeper.stamp(), None);
        let n = change(keeper, |q| {
            q.items.push(7);
            q.items.len()
        })
        .unwrap();
        assert_eq!(n, 1, "the closure's result comes back");
        let (q, first) = keeper.load().unwrap();
        assert_eq!(q.items, vec![7]);
        assert!(first.is_some() && first == keeper.stamp(), "a change moves the stamp");
        change(keeper, |q| q.items.retain(|_| true)).unwrap();
        assert_eq!(keeper.stamp(), first, "a change that changes nothing keeps the version");
        change(keeper, |q| q.items.push(8)).unwrap();
        assert_ne!(keeper.stamp(), first);
        assert_eq!(keeper.load().unwrap().0.items, vec![7, 8]);
    }

    #[test]
    fn the_database_and_the_test_double_keep_the_same_rules() {
        let tmp = tempfile::tempdir().unwrap();
        let db = super::super::db::Database::shared(&tmp.path().join("state.db")).unwrap();
        let rows = super::super::sections::Rows::open(db, "queue", &tmp.path().join("queue.json")).unwrap();
        holds_the_rules(&Section::new(JsonStateStore::on_rows(rows), "queue"));
        holds_the_rules(&Section::new(JsonStateStore::new(tmp.path().join("queue-file.json")), "queue"));
        holds_the_rules(&MemoryKeeper::new(Queue::default()));
    }
}
