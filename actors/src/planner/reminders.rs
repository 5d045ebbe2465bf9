//! The hour-before reminders of timed items (the rules provider's first rule), each said once:
//! the earliest item whose hour has begun and that was not reminded yet, with the others whose
//! hour has begun listed in the same message. One message for a cluster, because the gate lets
//! one nudge through a session's cooldown (30 min), whatever its priority: four items within
//! an hour said one by one would come late.

use crate::context::deadlines::Deadline;
use crate::context::words;
use crate::time::Language;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use raven_proto::PlannerContext;

/// How many other items one reminder lists by name; more are counted.
const LISTED: usize = 4;

/// The reminder due now: its first item and the others it lists.
#[derive(Debug)]
pub struct Reminder<'a> {
    pub first: &'a Deadline,
    pub also: Vec<&'a Deadline>,
    /// Items due too, beyond those listed.
    pub more: usize,
}

impl Reminder<'_> {
    /// `Reminder: <first> is due at 12:25.`, then `Also: <item> due at 12:40; …`.
    pub fn message(&self, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
        let mut text = words::reminder(self.first, now, tz, lang);
        if !self.also.is_empty() {
            let listed: Vec<String> = self.also.iter().map(|d| words::listed(d, now, tz, lang)).collect();
            text.push_str(&words::also(&listed, self.more, lang));
        }
        text
    }
}

/// How a due time reads after the item's title, in the journal's words: `is due at 12:25`,
/// `was due at 11:40`, `starts at 12:30`, `is due now`.
pub fn due_words(d: &Deadline, now: DateTime<Utc>, tz: Tz) -> String {
    words::due_words(d, now, tz, Language::English)
}

/// The reminder due at `ctx.now`, if any (`deadlines` soonest first).
pub fn due_reminder<'a>(deadlines: &'a [Deadline], ctx: &PlannerContext) -> Option<Reminder<'a>> {
    let open: Vec<&Deadline> =
        deadlines.iter().filter(|d| reminder_due(d, ctx.now) && !reminded(d, deadlines, ctx)).collect();
    let (first, rest) = open.split_first()?;
    let also: Vec<&Deadline> = rest.iter().take(LISTED).copied().collect();
    Some(Reminder { first, more: rest.len() - also.len(), also })
}

/// The hour-before reminder of a timed item: within the hour before it; a deadline (not an
/// event, which is never announced after it starts) also in the hour after. A whole-day item
/// gets the heads-up of its day instead.
pub fn reminder_due(d: &Deadline, now: DateTime<Utc>) -> bool {
    let late = if d.event { Duration::zero() } else { Duration::hours(1) };
    !d.all_day && d.is_imminent(now) && now - d.due < late
}

/// Reminded in its hour: a reminder went out while its hour had begun, about it or about an
/// item due no later than it (which listed it). A reminder's fire is filed under its first
/// item's topic.
fn reminded(d: &Deadline, all: &[Deadline], ctx: &PlannerContext) -> bool {
    all.iter().filter(|a| a.due <= d.due && !a.all_day).any(|a| {
        let last = ctx.fire_history.get(&a.topic).and_then(|h| h.last_fired);
        last.is_some_and(|t| d.is_imminent(t) && a.is_imminent(t))
    })
}

#[cfg(test)]
#[path = "reminders_tests.rs"]
mod tests;
