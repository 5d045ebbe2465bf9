//! Today's plan: the proactive fires the day intends, which the runner's scheduled-fire path
//! executes. Recurring slots (learned routines) fire without the LLM; one-shot deadline slots
//! go to the Planner, which alone can tell "not done yet" from "already finished".

use super::deadlines::Deadline;
use crate::time::Language;
use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use raven_proto::{Priority, Routine};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    Recurring,
    Deadline,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlanSlot {
    pub at: DateTime<Utc>,
    pub kind: SlotKind,
    pub topic: String,
    pub message: String,
    pub priority: Priority,
}

impl PlanSlot {
    /// A tick at `now` lands in the slot when `at <= now < at + window`.
    pub fn is_open(&self, now: DateTime<Utc>, window: Duration) -> bool {
        self.at <= now && now < self.at + window
    }
}

/// How long before a deadline its reminder slot opens.
pub fn deadline_lead() -> Duration {
    Duration::hours(1)
}

/// The slots of the user's local day that contains `now`, in time order.
pub fn plan_for_day(
    now: DateTime<Utc>,
    tz: Tz,
    routines: &[Routine],
    deadlines: &[Deadline],
    lang: Language,
) -> Vec<PlanSlot> {
    let today = now.with_timezone(&tz).date_naive();
    let mut slots = Vec::new();
    for r in routines.iter().filter(|r| r.days.on(today.weekday())) {
        let Some(t) = NaiveTime::from_hms_opt(u32::from(r.hour), 0, 0) else {
            continue;
        };
        let Some(at) = tz.from_local_datetime(&today.and_time(t)).earliest() else {
            continue;
        };
        slots.push(PlanSlot {
            at: at.with_timezone(&Utc),
            kind: SlotKind::Recurring,
            topic: r.topic.clone(),
            message: super::words::routine(&r.topic, lang),
            priority: Priority::Low,
        });
    }
    for d in deadlines.iter().filter(|d| d.due.with_timezone(&tz).date_naive() == today) {
        slots.push(PlanSlot {
            at: d.due - deadline_lead(),
            kind: SlotKind::Deadline,
            topic: d.topic.clone(),
            message: super::words::reminder(d, now, tz, lang),
            priority: d.priority,
        });
    }
    slots.sort_by_key(|s| s.at);
    slots
}
