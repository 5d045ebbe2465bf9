//! The last text read, kept per thread: every reader of deadlines (the runner, the attention
//! producers, the rules provider, discovery) reads the same MEMORY.md each tick, and a tick
//! must not pay for a full read of a long file several times, nor again on every tick of the
//! day. What a line says depends on the text, the zone, the date order and today's date only;
//! a duty's next occurrence depends on the exact time, so it is placed again on each call.

use super::{resolve, DateKind, DateOrder, FoundDate};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;
use std::cell::RefCell;

struct Entry {
    text: String,
    today: NaiveDate,
    tz: Tz,
    order: DateOrder,
    found: Vec<FoundDate>,
}

thread_local! {
    static LAST: RefCell<Option<Entry>> = const { RefCell::new(None) };
}

/// `read(text)` unless the same text was read today, with the same zone and order.
pub(super) fn read_through(
    text: &str,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
    read: impl FnOnce() -> Vec<FoundDate>,
) -> Vec<FoundDate> {
    let today = now.with_timezone(&tz).date_naive();
    let hit = LAST.with(|l| {
        let l = l.borrow();
        let e = l.as_ref()?;
        (e.today == today && e.tz == tz && e.order == order && e.text == text).then(|| e.found.clone())
    });
    let mut found = match hit {
        Some(found) => found,
        None => {
            let found = read();
            let entry = Entry { text: text.to_owned(), today, tz, order, found: found.clone() };
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
    let cron = resolve::cron(f.recurrence.as_deref()?)?;
    resolve::next_occurrence(&cron, now.checked_sub_signed(Duration::days(7))?, tz, true)
}
