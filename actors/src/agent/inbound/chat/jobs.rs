//! `/list`, `/cancel`, `/pause`, `/resume`: the user's reminders from the chat, soonest first,
//! each with its id, its schedule in words and its next time in the user's zone.

use super::ChatCommands;
use crate::cron::pause::PauseOutcome;
use crate::cron::store::{Job, Schedule};
use crate::cron::words::{day_and_time, in_words};
use crate::sessions::Answer;
use chrono::{DateTime, Utc};

impl ChatCommands {
    pub(super) fn list(&self, now: DateTime<Utc>) -> String {
        let file = match self.jobs.store.load() {
            Ok(f) => f,
            Err(e) => return format!("I could not read your reminders: {e}"),
        };
        let (mut live, paused): (Vec<&Job>, Vec<&Job>) =
            file.jobs.iter().partition(|j| j.enabled && j.state.paused.is_none());
        if live.is_empty() && paused.is_empty() {
            return "No reminders yet. Add one: /remind tomorrow at 9 call the dentist".into();
        }
        live.sort_by_key(|j| j.state.next_run_at.unwrap_or(now));
        let tz = self.jobs.tz;
        let mut out = format!("Your reminders ({tz}), soonest first:");
        for j in live {
            let next = match (&j.schedule, j.state.next_run_at) {
                // A one-shot's schedule already says when.
                (Schedule::At { .. }, _) | (_, None) => String::new(),
                (_, Some(t)) => format!("; next {}", day_and_time(t, tz)),
            };
            out.push_str(&format!("\n• {}: “{}”, {}{next}", j.id, j.message, in_words(&j.schedule, tz)));
        }
        if !paused.is_empty() {
            out.push_str("\nPaused:");
            for j in paused {
                let why = j.state.paused.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
                out.push_str(&format!("\n• {}: “{}”{why}. /resume {}", j.id, j.message, j.id));
            }
        }
        out.push_str("\nTo remove one: /cancel <id>");
        out
    }

    pub(super) fn cancel(&self, id: &str) -> Answer {
        let Some(id) = one_id(id) else {
            return Answer::Refused("Say which one: /cancel <id> (/list shows the ids).".into());
        };
        let removed = self.jobs.store.update(|f| {
            let at = f.jobs.iter().position(|j| j.id == id)?;
            Some(f.jobs.remove(at))
        });
        match removed {
            Ok(Some(j)) => Answer::Done(format!("Cancelled {id}: “{}”. It will not come again.", j.message)),
            Ok(None) => Answer::Refused(format!("There is no reminder {id}. /list shows yours.")),
            Err(e) => Answer::Refused(format!("Nothing changed: I could not write your reminders ({e}).")),
        }
    }

    pub(super) fn pause(&self, id: &str) -> String {
        let Some(id) = one_id(id) else { return "Say which one: /pause <id> (/list shows the ids).".into() };
        match self.jobs.store.pause(id, "paused from the chat") {
            Ok(PauseOutcome::Done) => format!("Paused {id}. To start it again: /resume {id}"),
            Ok(PauseOutcome::Already) => format!("{id} is paused already. To start it again: /resume {id}"),
            Ok(PauseOutcome::NoSuchJob) => format!("There is no reminder {id}. /list shows yours."),
            Err(e) => format!("Nothing changed: I could not write your reminders ({e})."),
        }
    }

    pub(super) fn resume(&self, id: &str, now: DateTime<Utc>) -> String {
        let Some(id) = one_id(id) else { return "Say which one: /resume <id> (/list shows the ids).".into() };
        match self.jobs.store.resume(id, now) {
            Ok(PauseOutcome::Done) => {
                let next = self
                    .jobs
                    .store
                    .load()
                    .ok()
                    .and_then(|f| f.jobs.iter().find(|j| j.id == id).and_then(|j| j.state.next_run_at));
                let when = next.map(|t| format!(" Next: {}.", day_and_time(t, self.jobs.tz))).unwrap_or_default();
                format!("Resumed {id}.{when}")
            }
            Ok(PauseOutcome::Already) => format!("{id} is not paused."),
            Ok(PauseOutcome::NoSuchJob) => format!("There is no reminder {id}. /list shows yours."),
            Err(e) => format!("Nothing changed: {e}"),
        }
    }
}

/// The one id a command names (`/cancel ab12cd`), without stray punctuation.
fn one_id(text: &str) -> Option<&str> {
    let id = text.split_whitespace().next()?.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_');
    (!id.is_empty()).then_some(id)
}
