//! When a job is due: one-shot `at`, fixed `every`, or a 5/6-field cron expression in an IANA
//! zone (croner: POSIX weekday numbering, 0 or 7 = Sunday).
//!
//! The DST rule, for a cron expression at a fixed wall-clock time:
//! - a local time the spring-forward change skips (02:30 in Europe/Berlin on the last Sunday of
//!   March) fires once, at the first real instant after the gap (03:00 local);
//! - a local time the fall-back change repeats fires once, at its first occurrence (the
//!   earlier offset).
//!
//! An interval expression (`*/15 * * * *`) follows real instants, so it fires in both copies of
//! a repeated hour and not in a skipped one: every 15 minutes of elapsed time stays 15 minutes.

use super::store::Schedule;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

pub use crate::config::MAX_EVERY_S;

/// How many upcoming slots of a cron expression its shortest gap is taken over.
const GAP_SAMPLE: usize = 50;

/// A parsed schedule: what the store holds, made ready to answer "when next".
#[derive(Debug, Clone)]
pub enum Parsed {
    At(DateTime<Utc>),
    Every { every: Duration, anchor: DateTime<Utc> },
    Cron { cron: Box<Cron>, tz: Tz },
}

/// Why a stored schedule cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("`{expr}` has {fields} fields; a cron expression has 5 or 6")]
    Fields { expr: String, fields: usize },
    #[error("`{expr}`: {source}")]
    Cron { expr: String, source: croner::errors::CronError },
    #[error("`{0}` is not an IANA time zone (say e.g. Europe/Berlin)")]
    Zone(String),
    #[error("every_s must be positive")]
    ZeroInterval,
    #[error("an interval of {0}s is over 100 years")]
    TooLong(u64),
}

/// Parses a cron expression of 5 fields (minute first) or 6 (second first).
pub fn parse_cron(expr: &str) -> Result<Cron, ScheduleError> {
    let fields = expr.split_whitespace().count();
    if !(5..=6).contains(&fields) {
        return Err(ScheduleError::Fields { expr: expr.to_owned(), fields });
    }
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
        .parse(expr)
        .map_err(|source| ScheduleError::Cron { expr: expr.to_owned(), source })
}

pub fn parse_tz(tz: &str) -> Result<Tz, ScheduleError> {
    tz.parse::<Tz>().map_err(|_| ScheduleError::Zone(tz.to_owned()))
}

impl Schedule {
    pub fn parse(&self) -> Result<Parsed, ScheduleError> {
        Ok(match self {
            Schedule::At { at } => Parsed::At(*at),
            Schedule::Every { every_s, anchor } => {
                if *every_s == 0 {
                    return Err(ScheduleError::ZeroInterval);
                }
                if *every_s > MAX_EVERY_S {
                    return Err(ScheduleError::TooLong(*every_s));
                }
                Parsed::Every { every: Duration::seconds(*every_s as i64), anchor: *anchor }
            }
            Schedule::Cron { expr, tz } => Parsed::Cron { cron: Box::new(parse_cron(expr)?), tz: parse_tz(tz)? },
        })
    }

    /// Whether the job stays after a fire (a one-shot `at` does not).
    pub fn recurring(&self) -> bool {
        !matches!(self, Schedule::At { .. })
    }
}

impl Parsed {
    /// The first due time strictly after `after`; `None` when there is none (a one-shot that
    /// has passed, an expression that never matches again).
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Parsed::At(at) => (*at > after).then_some(*at),
            Parsed::Every { every, anchor } => {
                if after < *anchor {
                    return Some(*anchor);
                }
                // Checked all the way: a date past what the types hold has no next time.
                let step = every.num_seconds().max(1);
                let n = (after - *anchor).num_seconds() / step + 1;
                anchor.checked_add_signed(Duration::try_seconds(n.checked_mul(step)?)?)
            }
            Parsed::Cron { cron, tz } => {
                cron.find_next_occurrence(&after.with_timezone(tz), false).ok().map(|t| t.with_timezone(&Utc))
            }
        }
    }

    /// The first due time of a job created at `created`: an `at` is due at its time (even when
    /// that has passed: it fires once on start, as a catch-up), the others at their first slot
    /// after creation (an `every` one interval after its anchor).
    pub fn first(&self, created: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Parsed::At(at) => Some(*at),
            Parsed::Every { .. } | Parsed::Cron { .. } => self.next_after(created),
        }
    }

    /// The shortest time between two consecutive slots from `from` on: an `every` job's
    /// interval; for a cron expression, the least gap over its next 50 slots. `None` for a
    /// one-shot, or an expression with fewer than two slots ahead.
    pub fn shortest_gap(&self, from: DateTime<Utc>) -> Option<Duration> {
        match self {
            Parsed::At(_) => None,
            Parsed::Every { every, .. } => Some(*every),
            Parsed::Cron { cron, .. } => shortest_cron_gap(cron, from),
        }
    }
}

/// The least gap between the next [`GAP_SAMPLE`] slots of `cron`, read on a clock with no
/// daylight saving: the gap of the pattern itself, so a daily job's 23-hour day at the spring
/// change does not make it look more frequent than daily.
fn shortest_cron_gap(cron: &Cron, from: DateTime<Utc>) -> Option<Duration> {
    let first = cron.find_next_occurrence(&from, false).ok();
    let slots: Vec<DateTime<Utc>> =
        std::iter::successors(first, |t| cron.find_next_occurrence(t, false).ok()).take(GAP_SAMPLE).collect();
    slots.windows(2).map(|w| w[1] - w[0]).min()
}

#[cfg(test)]
mod tests;
