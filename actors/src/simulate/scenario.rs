//! The scenario file (TOML): when the run starts, how long it lasts, and what happens in it.
//! Parsing is strict (unknown keys are refused) and every error names the file and the key,
//! so a typo never silently becomes an empty week.
//!
//! Times (`start`, and every `at`) are read by the shared time parser in the scenario's zone:
//! RFC 3339, `2026-03-02 09:00`, or, after `start`, a form relative to it (`tuesday at 9`,
//! `in 2 days`); a `cron` entry takes an expression, `@daily` or words (`every weekday at 9`).
//!
//! Calendar entries become events, `<title> on YYYY-MM-DD at HH:MM` lines appended to
//! MEMORY.md `notice_hours` (default 24) before they start, or at the start when that is
//! earlier. Message times move by up to `jitter_minutes` either way, drawn from `seed`.
//! `calendar_ics` is written to `workspace/calendar.ics` (the default calendar file).
//!
//! The scripted user (`[[react]]`): how they answer a proactive message on a topic, some
//! minutes after it arrives: `stop` (replies `/stop`), `accept` (replies `/ok`), `dismiss`
//! (a dismissal, as `raven feedback <id> dismissed`) or `ignore` (no reply: the no-reply
//! timer decides). A message on a topic without a rule is not answered either.

use super::rng::SplitMix64;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Shown in the report (default: the file's stem).
    pub name: Option<String>,
    pub start: String,
    #[serde(default = "one")]
    pub days: u32,
    /// Run this many hours instead of `days` whole days (a short scenario).
    pub hours: Option<u32>,
    #[serde(default = "thirty")]
    pub tick_minutes: u32,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "utc")]
    pub timezone: Tz,
    #[serde(default)]
    pub jitter_minutes: u32,
    pub memory: Option<Text>,
    pub heartbeat: Option<Text>,
    /// Overrides of the engine's config.toml, as in that file (`[config.policy]` …).
    pub config: Option<toml::Table>,
    #[serde(default, rename = "message")]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub feedback: Vec<Feedback>,
    #[serde(default)]
    pub calendar: Vec<Calendar>,
    #[serde(default)]
    pub cron: Vec<CronJob>,
    #[serde(default, rename = "react")]
    pub reactions: Vec<React>,
    /// An iCalendar file's text, written to workspace/calendar.ics.
    pub calendar_ics: Option<Text>,
}

/// The scripted user's answer to proactive messages on one topic.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct React {
    pub topic: String,
    /// `stop`, `accept`, `dismiss` or `ignore`.
    pub with: String,
    #[serde(default = "ten")]
    pub after_minutes: u32,
}

pub const REACTIONS: [&str; 4] = ["stop", "accept", "dismiss", "ignore"];

fn ten() -> u32 {
    10
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    pub text: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub at: String,
    #[serde(default = "cli_local")]
    pub session: String,
    pub text: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feedback {
    pub at: String,
    pub verdict: String,
    /// Which nudge: only `last` (the last Sentinel nudge delivered before `at`).
    #[serde(default = "last")]
    pub of: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calendar {
    pub at: String,
    pub title: String,
    #[serde(default = "day_hours")]
    pub notice_hours: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CronJob {
    pub id: String,
    pub message: String,
    /// Every this many minutes, the first fire at the start.
    pub every_minutes: Option<u32>,
    /// A cron expression, in `tz` (default: the scenario's zone).
    pub cron: Option<String>,
    pub tz: Option<String>,
    /// Once, at this RFC 3339 time.
    pub at: Option<String>,
    #[serde(default = "cli_local")]
    pub target: String,
}

fn one() -> u32 {
    1
}
fn thirty() -> u32 {
    30
}
fn utc() -> Tz {
    Tz::UTC
}
fn cli_local() -> String {
    "cli:local".into()
}
fn last() -> String {
    "last".into()
}
fn day_hours() -> u32 {
    24
}

/// What happens at one instant of the run, before the engine's own timers at that instant.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A line appended to MEMORY.md, about an event that `starts` then.
    Calendar {
        line: String,
        starts: DateTime<Utc>,
    },
    Message {
        session: String,
        text: String,
    },
    Verdict {
        verdict: String,
    },
}

/// A scenario checked and resolved to times.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub tick: Duration,
    pub seed: u64,
    pub tz: Tz,
    pub memory: String,
    pub heartbeat: Option<String>,
    pub config: Option<toml::Table>,
    /// Sorted by time; ties keep the file's order (calendar, messages, then feedback).
    pub events: Vec<(DateTime<Utc>, Event)>,
    pub jobs: Vec<crate::cron::store::Job>,
    pub reactions: Vec<React>,
    pub calendar_ics: Option<String>,
}

/// Changes the command line may make to the file's values.
#[derive(Debug, Clone, Copy, Default)]
pub struct Adjust {
    pub days: Option<u32>,
    pub seed: Option<u64>,
}

/// Reads `path` into a plan; errors name the file and the key.
// A `String` error: names the scenario file's key for the person who wrote it.
pub fn load(path: &std::path::Path, adjust: Adjust) -> Result<Plan, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("scenario {}: {e}", path.display()))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scenario".into());
    parse(&text, &stem, adjust).map_err(|e| format!("scenario {}: {e}", path.display()))
}

/// Parses scenario text; `stem` names it when it has no `name`.
// A `String` error: names the scenario file's key for the person who wrote it.
pub fn parse(text: &str, stem: &str, adjust: Adjust) -> Result<Plan, String> {
    let s: Scenario = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
    s.resolve(stem, adjust)
}

/// A time of the scenario, read by the shared time parser in the scenario's zone: RFC 3339,
/// `2026-03-02 09:00`, or a form relative to `start` (`tuesday at 9`, `in 2 days`).
// A `String` error: names the scenario file's key for the person who wrote it.
fn time(key: &str, value: &str, start: DateTime<Utc>, tz: Tz) -> Result<DateTime<Utc>, String> {
    crate::time::parse_instant(value, start, tz, crate::time::DateOrder::default()).map_err(|e| format!("{key}: {e}"))
}

impl Scenario {
    // A `String` error: names the scenario file's key for the person who wrote it.
    fn resolve(self, stem: &str, adjust: Adjust) -> Result<Plan, String> {
        let tz = self.timezone;
        // `start` counts from nothing: it must be absolute (RFC 3339 or a date and time).
        let start = crate::time::parse_absolute(&self.start, tz).map_err(|e| format!("start: {e}"))?;
        let days = adjust.days.unwrap_or(self.days);
        let hours = match (adjust.days, self.hours) {
            (None, Some(h)) => h,
            _ => days.saturating_mul(24),
        };
        if hours == 0 {
            return Err("days (or hours) must be at least 1".into());
        }
        if self.tick_minutes == 0 {
            return Err("tick_minutes must be at least 1".into());
        }
        let end = start + Duration::hours(i64::from(hours));
        let seed = adjust.seed.unwrap_or(self.seed);
        let mut rng = SplitMix64::new(seed);
        let mut events = Vec::new();
        for (i, c) in self.calendar.iter().enumerate() {
            let due = time(&format!("calendar[{i}].at"), &c.at, start, tz)?;
            // An event, as people write one: announced before it starts, never after.
            let local = due.with_timezone(&self.timezone).format("%Y-%m-%d at %H:%M");
            let line = format!("{} on {local}", c.title.trim());
            let shown = (due - Duration::hours(i64::from(c.notice_hours))).max(start);
            events.push((shown, Event::Calendar { line, starts: due }));
        }
        let jitter = i64::from(self.jitter_minutes);
        for (i, m) in self.messages.iter().enumerate() {
            let at = time(&format!("message[{i}].at"), &m.at, start, tz)? + Duration::minutes(rng.symmetric(jitter));
            if !m.session.contains(':') {
                return Err(format!("message[{i}].session = `{}` is not `channel:chat_id`", m.session));
            }
            events.push((at.max(start), Event::Message { session: m.session.clone(), text: m.text.clone() }));
        }
        for (i, f) in self.feedback.iter().enumerate() {
            let at = time(&format!("feedback[{i}].at"), &f.at, start, tz)?;
            if crate::feedback::Lifecycle::parse_verdict(&f.verdict).is_none() {
                return Err(format!("feedback[{i}].verdict = `{}`: one of accepted, dismissed, neutral", f.verdict));
            }
            if f.of != "last" {
                return Err(format!("feedback[{i}].of = `{}`: only `last` is known", f.of));
            }
            events.push((at, Event::Verdict { verdict: f.verdict.clone() }));
        }
        for (i, r) in self.reactions.iter().enumerate() {
            if !REACTIONS.contains(&r.with.as_str()) {
                return Err(format!("react[{i}].with = `{}`: one of {}", r.with, REACTIONS.join(", ")));
            }
        }
        events.sort_by_key(|(at, _)| *at);
        let jobs =
            self.cron.iter().enumerate().map(|(i, c)| job(i, c, start, self.timezone)).collect::<Result<_, _>>()?;
        Ok(Plan {
            name: self.name.clone().unwrap_or_else(|| stem.to_owned()),
            start,
            end,
            tick: Duration::minutes(i64::from(self.tick_minutes)),
            seed,
            tz: self.timezone,
            memory: self.memory.map(|m| m.text).unwrap_or_else(|| "# Memory\n".into()),
            heartbeat: self.heartbeat.map(|h| h.text),
            config: self.config,
            events,
            jobs,
            reactions: self.reactions,
            calendar_ics: self.calendar_ics.map(|c| c.text),
        })
    }
}

// A `String` error: names the scenario file's key for the person who wrote it.
fn job(i: usize, c: &CronJob, start: DateTime<Utc>, tz: Tz) -> Result<crate::cron::store::Job, String> {
    use crate::cron::store::{Job, Schedule};
    let key = |k: &str| format!("cron[{i}].{k}");
    let schedule = match (c.every_minutes, &c.cron, &c.at) {
        (Some(0), None, None) => return Err(format!("{} must be at least 1", key("every_minutes"))),
        (Some(m), None, None) => Schedule::Every { every_s: u64::from(m) * 60, anchor: start },
        (None, Some(expr), None) => {
            // An expression, `@daily`, or a recurrence in words (`every weekday at 9`).
            let tz = match &c.tz {
                Some(name) => crate::cron::schedule::parse_tz(name).map_err(|e| format!("{}: {e}", key("tz")))?,
                None => tz,
            };
            let when = crate::time::parse_when(expr, start, tz, crate::time::DateOrder::default())
                .map_err(|e| format!("{}: {e}", key("cron")))?;
            match crate::cron::tool::schedule_of(when, start) {
                s @ Schedule::Cron { .. } => s,
                _ => return Err(format!("{} = `{expr}` is not a recurrence (use `at` or every_minutes)", key("cron"))),
            }
        }
        (None, None, Some(at)) => Schedule::At { at: time(&key("at"), at, start, tz)? },
        _ => return Err(format!("cron[{i}] (`{}`) needs exactly one of every_minutes, cron, at", c.id)),
    };
    if c.id.trim().is_empty() {
        return Err(format!("{} is empty", key("id")));
    }
    Ok(Job {
        id: c.id.clone(),
        message: c.message.clone(),
        schedule,
        target: Some(c.target.clone()),
        broadcast: Vec::new(),
        // Before the anchor, so an `every` job fires first at the start.
        created_at: start - Duration::seconds(1),
        enabled: true,
        topic: None,
        state: Default::default(),
        extra: Default::default(),
    })
}
