//! The pure producers, on by default; each owns one H2 section of attention.md. Their output
//! depends only on their input (no "in 3 hours"), so an unchanged day writes nothing.

use super::{ProduceError, Producer, ProducerInput};
use crate::context::deadlines::parse_deadlines;
use crate::context::plan::SlotKind;
use chrono::Duration;
use std::fmt::Write;

/// The pure producers, and the LLM-backed one (skipped unless the daily analysis runs).
pub fn defaults() -> Vec<Box<dyn Producer>> {
    vec![
        Box::new(UpcomingDeadlines),
        Box::new(TodaysPlan),
        Box::new(RecentEngagement),
        Box::new(Routines),
        Box::new(DailyFocus),
    ]
}

fn or_none(body: String) -> String {
    if body.is_empty() {
        "- none".into()
    } else {
        body
    }
}

pub struct UpcomingDeadlines;

impl Producer for UpcomingDeadlines {
    fn section(&self) -> &'static str {
        "Upcoming deadlines"
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError> {
        let mut out = String::new();
        for d in parse_deadlines(&input.memory_md, input.now, input.tz, input.order, &Default::default()) {
            if d.due > input.now + Duration::days(7) {
                continue;
            }
            let when = d.due.with_timezone(&input.tz).format("%Y-%m-%d %H:%M");
            let overdue = if d.due < input.now { " — overdue" } else { "" };
            let _ = writeln!(out, "- {when} {} ({}){overdue}", d.title, d.priority);
        }
        Ok(or_none(out))
    }
}

pub struct TodaysPlan;

impl Producer for TodaysPlan {
    fn section(&self) -> &'static str {
        "Today's plan"
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError> {
        let mut out = String::new();
        for s in &input.plan {
            let kind = match s.kind {
                SlotKind::Recurring => "recurring",
                SlotKind::Deadline => "deadline",
            };
            let at = s.at.with_timezone(&input.tz).format("%H:%M");
            let _ = writeln!(out, "- {at} [{kind}] {}: {}", s.topic, s.message);
        }
        Ok(or_none(out))
    }
}

pub struct RecentEngagement;

impl Producer for RecentEngagement {
    fn section(&self) -> &'static str {
        "Recent engagement"
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError> {
        let f = &input.feedback;
        let pct = |r: crate::feedback::Rate| match r.acceptance() {
            Some(a) => format!("{:.0}% of {}", a * 100.0, r.samples()),
            None => "no verdicts".into(),
        };
        let mut out = format!("- accepted: {} (high priority: {})\n", pct(f.overall), pct(f.high_priority));
        let mut topics: Vec<_> = f.by_topic.iter().filter(|(_, t)| t.rate.dismissed > 0).collect();
        topics.sort_by(|a, b| b.1.rate.dismissed.cmp(&a.1.rate.dismissed).then(a.0.cmp(b.0)));
        for (topic, t) in topics.into_iter().take(5) {
            let _ = writeln!(out, "- dismissed `{topic}` {}x", t.rate.dismissed);
        }
        Ok(out)
    }
}

pub struct Routines;

impl Producer for Routines {
    fn section(&self) -> &'static str {
        "Routines"
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError> {
        let mut out = String::new();
        for r in &input.routines {
            let _ = writeln!(out, "- {} around {:02}:00 (seen on {} days)", r.topic, r.hour, r.days_seen);
        }
        Ok(or_none(out))
    }
}

/// LLM-backed: renders the day's shared analysis.
pub struct DailyFocus;

impl Producer for DailyFocus {
    fn section(&self) -> &'static str {
        "Daily focus"
    }

    fn enabled(&self, input: &ProducerInput) -> bool {
        input.daily_analysis.is_some()
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError> {
        let a = input.daily_analysis.as_ref().ok_or(ProduceError::Missing("daily analysis"))?;
        Ok(format!("- focus: {}\n- watch out: {}", a.focus.trim(), a.watch_out.trim()))
    }
}
