//! `/why [words]`: what was lately decided about the user, and why, from the decision journal,
//! written for a chat: a message sent and the reason, one held back and by which rule of the
//! gate, a reminder fired, a verdict given; the latest "nothing worth saying" once. Newest
//! first; with words, only the decisions whose topic, message or reason has them.

use super::ChatCommands;
use crate::journal::{read_all, Entry, Event};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// How many decisions one answer shows.
const SHOWN: usize = 6;

/// How many of the newest journal lines an answer looks through.
const LOOKED_AT: usize = 5_000;

impl ChatCommands {
    pub(super) fn why(&self, words: &str, now: DateTime<Utc>) -> String {
        let lines = match read_all(&self.journal) {
            Ok(Some(lines)) => lines,
            Ok(None) => return "Nothing decided yet: I have not looked at your notes since I started.".into(),
            Err(e) => return format!("I could not read my journal ({e})."),
        };
        let wanted = words.trim().to_lowercase();
        let tz = self.jobs.tz;
        let entries = lines.iter().rev().take(LOOKED_AT).filter_map(|l| serde_json::from_str::<Entry>(l).ok());
        let mut told_quiet = false;
        let said: Vec<String> = entries
            .filter(|e| wanted.is_empty() || about(e, &wanted))
            .filter_map(|e| Some(format!("• {}: {}", when(e.at, now, tz), said_of(&e, &mut told_quiet)?)))
            .take(SHOWN)
            .collect();
        match (said.is_empty(), wanted.is_empty()) {
            (true, true) => "Nothing decided lately.".into(),
            (true, false) => format!(
                "Nothing decided about “{}” lately. A note is read at each look at your notes; /list shows your reminders.",
                words.trim()
            ),
            (false, true) => format!("What I decided lately, newest first ({tz}):\n{}", said.join("\n")),
            (false, false) => format!("About “{}”, newest first ({tz}):\n{}", words.trim(), said.join("\n")),
        }
    }
}

/// Whether `e` is about `wanted` (lower case): its topic, its message or its reason has it.
fn about(e: &Entry, wanted: &str) -> bool {
    let has = |s: &str| s.to_lowercase().contains(wanted);
    e.topic().is_some_and(has)
        || match &e.event {
            Event::Gate(g) => has(&g.content) || has(&g.reason),
            Event::Tick(t) => has(&t.reason),
            Event::Cron(c) => has(&c.job),
            _ => false,
        }
}

/// One decision in words; `None` for what is not one (a config reload, tokens used, a gate
/// pass, a skip older than the newest one).
fn said_of(e: &Entry, told_quiet: &mut bool) -> Option<String> {
    Some(match &e.event {
        Event::Tick(t) if t.outcome == "delivered" => format!("I sent a message: {}.", trimmed(&t.reason)),
        Event::Tick(t) if t.outcome == "failed" => {
            let error = t.error.as_deref().unwrap_or(&t.reason);
            match error.split_once("kept in the outbox: ") {
                Some((_, why)) => format!("a message waits to be delivered: {}.", trimmed(why)),
                None => format!("a message failed: {}.", trimmed(error)),
            }
        }
        Event::Tick(t) if t.outcome == "skipped" && !*told_quiet => {
            *told_quiet = true;
            format!("nothing worth a message: {}.", trimmed(t.fast_path.as_deref().unwrap_or(&t.reason)))
        }
        Event::Gate(g) if !g.allow => {
            let rule = g.layer_name.as_deref().map(|n| n.replace('_', " ")).unwrap_or_else(|| "the gate".into());
            format!("I held back “{}”: {} ({rule}).", g.content, trimmed(&g.reason))
        }
        Event::Cron(c) => format!("your reminder {} went out.", c.job),
        Event::Verdict(v) => {
            format!("you said {} ({}).", v.verdict, v.topic.as_deref().unwrap_or("that message"))
        }
        Event::Outbox(o) if o.step == "dead_letter" => {
            format!(
                "a message to {} could not be delivered: {}.",
                o.target,
                o.why.as_deref().unwrap_or("it kept failing")
            )
        }
        _ => return None,
    })
}

/// A reason as a chat shows it: no closing full stop (the line adds one), no backticks.
fn trimmed(reason: &str) -> String {
    reason.trim().trim_end_matches('.').replace('`', "")
}

/// `14:02` today, else `Mon 7 Dec at 14:02`.
fn when(at: DateTime<Utc>, now: DateTime<Utc>, tz: Tz) -> String {
    match at.with_timezone(&tz).date_naive() == now.with_timezone(&tz).date_naive() {
        true => at.with_timezone(&tz).format("%H:%M").to_string(),
        false => crate::cron::words::day_and_time(at, tz),
    }
}

#[cfg(test)]
#[path = "why_tests.rs"]
mod tests;
