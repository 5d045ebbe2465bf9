//! What is due, for every reader of deadlines (the rules provider, the daily plan and its
//! slots, the outage fallback, the attention producers, discovery's options): the open dated
//! lines of MEMORY.md as [`time::find_dates`](crate::time::find_dates) reads them, in plain words
//! as people write them:
//!
//! ```text
//! - [ ] Submit the tax return due: 2026-03-02 17:00 !high     a deadline
//! Dentist on May 15 at 3pm                                     an event (announced before, never after)
//! 5/20 checkup for Mia                                         an event, all day
//! pay the nanny on the 20th of every month                     a duty: a deadline on each occurrence
//! - [x] Book flights due 2026-02-20                            done: ignored
//! ```

use crate::policy::topic::topic_of;
use crate::time::{find_dates_shared, occurrences, DateKind, DateOrder, FoundDate, Importance, Ladder};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use raven_proto::{Priority, TopicFireHistory};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Deadline {
    pub title: String,
    pub due: DateTime<Utc>,
    pub priority: Priority,
    pub topic: String,
    /// No time was written: due at the end of its day.
    pub all_day: bool,
    /// Something that happens then (announced before it starts, never after), not something to
    /// have done by then.
    pub event: bool,
    /// How long before it the reminder comes (a calendar alarm); `None`: an hour.
    pub notice: Option<Duration>,
    /// How long before it the user asked to hear of it (`a week before`, `提前3天`), else what
    /// its kind needs (a booking a week, a payment three days): a heads-up then, besides the one
    /// the day before. `None`: the day before only.
    pub lead: Option<Duration>,
    /// The kind the lead is for, when the user asked for none.
    pub lead_for: Option<crate::time::Need>,
}

impl Deadline {
    /// An item as tests write it: medium priority, topic `t`, no notice and no lead.
    #[cfg(test)]
    pub(crate) fn plain(title: &str, due: DateTime<Utc>, all_day: bool, event: bool) -> Deadline {
        Deadline {
            title: title.into(),
            due,
            priority: Priority::Medium,
            topic: "t".into(),
            all_day,
            event,
            notice: None,
            lead: None,
            lead_for: None,
        }
    }

    /// Within its notice (an hour unless its calendar alarm says otherwise), or already past.
    pub fn is_imminent(&self, now: DateTime<Utc>) -> bool {
        self.due - now <= self.notice.unwrap_or(Duration::hours(1))
    }

    /// The heads-up window `now` is in: the day before (24 h), else the user's lead when it
    /// is longer and `now` is within it; `None` before any.
    /// A whole-day item's lead counts from the start of its day (`a week before` the 10th is
    /// the 3rd).
    pub fn heads_up_window(&self, now: DateTime<Utc>) -> Option<Duration> {
        let left = self.due - now;
        let day = Duration::hours(24);
        let day_start = if self.all_day { Duration::minutes(23 * 60 + 59) } else { Duration::zero() };
        match self.lead.filter(|l| *l > day) {
            _ if left <= day => Some(day),
            Some(lead) if left <= lead + day_start => Some(lead + day_start),
            _ => None,
        }
    }

    /// How the due time reads in a message: `at 15:00`, `tomorrow at 15:00`, `on Fri 3 Apr at
    /// 15:00`; for a whole day `today`, `tomorrow` or `on Fri 3 Apr`.
    pub fn when(&self, now: DateTime<Utc>, tz: Tz) -> String {
        let local = self.due.with_timezone(&tz);
        let today = now.with_timezone(&tz).date_naive();
        let day = match (local.date_naive() - today).num_days() {
            0 => None,
            1 => Some("tomorrow".to_owned()),
            _ => Some(format!("on {}", local.format("%a %-d %b"))),
        };
        match (self.all_day, day) {
            (true, None) => "today".into(),
            (true, Some(day)) => day,
            (false, None) => format!("at {}", local.format("%H:%M")),
            (false, Some(day)) => format!("{day} at {}", local.format("%H:%M")),
        }
    }
}

/// Whether `d`'s heads-up was given in its current window: its topic was nudged since the
/// window began, or in the day before it began (a lead heads-up that came late, a day and a
/// few hours ahead, covers the day before).
pub fn told(d: &Deadline, now: DateTime<Utc>, history: &BTreeMap<String, TopicFireHistory>) -> bool {
    let last = history.get(&d.topic).and_then(|h| h.last_fired);
    let window = d.heads_up_window(now).unwrap_or_default();
    last.is_some_and(|t| t >= d.due - window - Duration::hours(24))
}

/// A lead in words: `7 days` reads `1 week`, `3 days`, `2 hours`.
pub fn lead_words(lead: Duration) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match (lead.num_days(), lead.num_hours()) {
        (d, _) if d > 0 && d % 7 == 0 => plural(d / 7, "week"),
        (d, _) if d > 0 => plural(d, "day"),
        (_, h) => plural(h, "hour"),
    }
}

/// How far around now a duty's occurrences become deadlines.
const DUTY_PAST: Duration = Duration::days(2);
const DUTY_AHEAD: Duration = Duration::days(14);

/// Every open deadline and event in `memory_md` (done ones left out; a duty gives one per
/// occurrence from two days ago to two weeks ahead), soonest first.
pub fn parse_deadlines(
    memory_md: &Arc<str>,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
    ladder: &Ladder,
) -> Vec<Deadline> {
    let mut out: Vec<Deadline> = find_dates_shared(memory_md, now, tz, order)
        .into_iter()
        .filter(|f| !f.done && !f.title.is_empty())
        .flat_map(|f| {
            let dues = match f.kind {
                DateKind::Duty => occurrences(&f, now - DUTY_PAST, now + DUTY_AHEAD, tz),
                DateKind::Deadline | DateKind::Event => vec![f.at],
            };
            dues.into_iter().map(move |due| deadline(&f, due, ladder)).collect::<Vec<_>>()
        })
        .collect();
    out.sort_by_key(|d| d.due);
    out
}

/// Everything dated the Planner's context holds: the notes' deadlines and events, and the
/// calendar's events (an event: announced before it starts, never after), soonest first. The
/// kinds the user asked to hear of earlier (`ctx.earlier_kinds`) get a longer lead than `ladder`.
pub fn deadlines_in(ctx: &raven_proto::PlannerContext, tz: Tz, order: DateOrder, ladder: &Ladder) -> Vec<Deadline> {
    let learned = ladder.lengthened(&ctx.earlier_kinds);
    let ladder = &learned;
    let mut out = parse_deadlines(&ctx.memory_md, ctx.now, tz, order, ladder);
    out.extend(ctx.calendar.iter().map(|c| {
        let need = crate::time::Need::of(&c.title);
        Deadline {
            title: c.title.clone(),
            due: c.starts_at,
            priority: Priority::Medium,
            topic: topic_of(&c.title),
            all_day: c.all_day,
            event: true,
            notice: c.notice_minutes.map(Duration::minutes),
            lead: need.and_then(|n| ladder.lead(n)),
            lead_for: need,
        }
    }));
    out.sort_by_key(|d| d.due);
    out
}

fn deadline(f: &FoundDate, due: DateTime<Utc>, ladder: &Ladder) -> Deadline {
    let priority = match f.importance {
        Importance::High => Priority::High,
        Importance::Low => Priority::Low,
        Importance::Medium => Priority::Medium,
    };
    Deadline {
        title: f.title.clone(),
        due,
        priority,
        topic: topic_of(&f.title),
        all_day: f.all_day,
        event: f.kind == DateKind::Event,
        notice: None,
        lead: f.lead_by(ladder),
        lead_for: f.lead_for,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_heads_up_window_is_the_lead_asked_for_then_the_day_before() {
        let due = Utc.with_ymd_and_hms(2026, 3, 10, 12, 0, 0).unwrap();
        let mut d = Deadline { lead: Some(Duration::days(7)), ..Deadline::plain("x", due, false, true) };
        assert_eq!(d.heads_up_window(due - Duration::days(8)), None);
        assert_eq!(d.heads_up_window(due - Duration::days(6)), Some(Duration::days(7)));
        assert_eq!(d.heads_up_window(due - Duration::hours(20)), Some(Duration::hours(24)));
        d.all_day = true;
        assert_eq!(
            d.heads_up_window(due - Duration::days(7) - Duration::hours(20)),
            Some(Duration::minutes(8 * 24 * 60 - 1)),
            "from the start of its day"
        );
        d.lead = Some(Duration::hours(2));
        assert_eq!(d.heads_up_window(due - Duration::hours(30)), None, "a lead under a day adds nothing");
        assert_eq!(
            [lead_words(Duration::days(7)), lead_words(Duration::days(3)), lead_words(Duration::hours(1))],
            ["1 week", "3 days", "1 hour"]
        );
    }

    #[test]
    fn deadlines_parse_with_time_priority_and_done_marks() {
        let md = "# Notes\n- [ ] Submit the tax return due: 2026-03-02 17:00 !high\n- [ ] Renew passport (due 2026-04-01)\n- [x] Book flights due 2026-02-20\nno date here due soon\n";
        let now = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        let d = parse_deadlines(&md.into(), now, chrono_tz::Europe::Berlin, DateOrder::MonthFirst, &Ladder::default());
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].title, "Submit the tax return");
        assert_eq!(d[0].priority, Priority::High);
        assert_eq!(d[0].due, Utc.with_ymd_and_hms(2026, 3, 2, 16, 0, 0).unwrap());
        assert!(!d[0].all_day && !d[0].event);
        assert_eq!(d[1].title, "Renew passport");
        assert_eq!(d[1].priority, Priority::Medium);
        assert_eq!(d[1].due, Utc.with_ymd_and_hms(2026, 4, 1, 21, 59, 0).unwrap());
        assert!(d[1].all_day);
        assert_eq!(d[0].topic, "return");
    }

    #[test]
    fn a_duty_is_a_deadline_on_each_occurrence_and_an_event_is_marked() {
        let md = "pay the nanny on the 20th of every month\nDentist on May 15 at 3pm\n";
        let now = Utc.with_ymd_and_hms(2026, 5, 10, 9, 0, 0).unwrap();
        let d = parse_deadlines(&md.into(), now, chrono_tz::Tz::UTC, DateOrder::MonthFirst, &Ladder::default());
        let titles: Vec<(&str, bool)> = d.iter().map(|d| (d.title.as_str(), d.event)).collect();
        assert_eq!(titles, [("Dentist", true), ("pay the nanny", false)], "{d:?}");
        assert_eq!(d[0].when(now, chrono_tz::Tz::UTC), "on Fri 15 May at 15:00");
        assert_eq!(d[1].due.with_timezone(&chrono_tz::Tz::UTC).date_naive().to_string(), "2026-05-20");
    }
}
