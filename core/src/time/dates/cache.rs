//! The last text read, kept per thread: every reader of deadlines (the runner, the attention
//! producers, the rules provider, discovery) reads the same MEMORY.md each tick, and a tick
//! must not pay for a full read of a long file several times, nor again on every tick of the
//! day. What a line says depends on the text, the zone, the date order and today's date only;
//! a duty's next occurrence depends on the exact time, so it is placed again on each call.

use super::{resolve, DateKind, DateOrder, FoundDate};
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use std::cell::RefCell;
use std::sync::Arc;

struct Entry {
    /// Shared with the caller when it gave its text as an `Arc`: the next call with that same
    /// allocation is a hit without comparing a byte (the entry holds it, so it cannot change).
    text: Arc<str>,
    today: NaiveDate,
    tz: Tz,
    order: DateOrder,
    found: Vec<FoundDate>,
}

thread_local! {
    static LAST: RefCell<Option<Entry>> = const { RefCell::new(None) };
}

/// `read(text)` unless the same text was read today, with the same zone and order. `shared`
/// is `text` itself when the caller holds it in an `Arc`.
pub(super) fn read_through(
    text: &str,
    shared: Option<&Arc<str>>,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
    read: impl FnOnce() -> Vec<FoundDate>,
) -> Vec<FoundDate> {
    let today = now.with_timezone(&tz).date_naive();
    let hit = LAST.with(|l| {
        let mut l = l.borrow_mut();
        let e = l.as_mut()?;
        if e.today != today || e.tz != tz || e.order != order {
            return None;
        }
        if shared.is_some_and(|s| Arc::ptr_eq(s, &e.text)) {
            return Some(e.found.clone());
        }
        if *e.text != *text {
            return None;
        }
        // The same words in another allocation: keep the caller's, so its next call is cheap.
        if let Some(s) = shared {
            e.text = s.clone();
        }
        Some(e.found.clone())
    });
    let mut found = match hit {
        Some(found) => found,
        None => {
            let found = read();
            let text = shared.cloned().unwrap_or_else(|| Arc::from(text));
            let entry = Entry { text, today, tz, order, found: found.clone() };
            LAST.with(|l| *l.borrow_mut() = Some(entry));
            found
        }
    };
    for f in found.iter_mut().filter(|f| f.kind == DateKind::Duty) {
        if let Some(at) = next_duty(f, now, tz) {
            f.at = at;
        }
    }
    found
}

/// A duty's next occurrence at or after a week before now (as the reader places it).
fn next_duty(f: &FoundDate, now: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
    resolve::Schedule::parse(f.recurrence.as_deref()?)?.due(now, tz)
}
