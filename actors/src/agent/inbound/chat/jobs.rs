//! `/list`, `/cancel`, `/pause`, `/resume`: the user's reminders from the chat, soonest first,
//! each with its id, its schedule in words and its next time in the user's zone, in English or
//! Chinese.

use super::ChatCommands;
use crate::cron::pause::PauseOutcome;
use crate::cron::store::{Job, Schedule};
use crate::cron::words::{day_and_time, day_and_time_in, in_words_in};
use crate::sessions::Answer;
use crate::time::Language;
use chrono::{DateTime, Utc};

impl ChatCommands {
    pub(super) fn list(&self, now: DateTime<Utc>, lang: Language) -> String {
        let zh = lang == Language::Chinese;
        let file = match self.jobs.store.load() {
            Ok(f) => f,
            Err(e) if zh => return format!("读不了你的提醒：{e}"),
            Err(e) => return format!("I could not read your reminders: {e}"),
        };
        let (mut live, paused): (Vec<&Job>, Vec<&Job>) =
            file.jobs.iter().partition(|j| j.enabled && j.state.paused.is_none());
        if live.is_empty() && paused.is_empty() {
            return match zh {
                true => "还没有提醒。加一条：/remind 明天上午9点 给牙医打电话".into(),
                false => "No reminders yet. Add one: /remind tomorrow at 9 call the dentist".into(),
            };
        }
        live.sort_by_key(|j| j.state.next_run_at.unwrap_or(now));
        let tz = self.jobs.tz;
        let mut out = if zh {
            format!("你的提醒（{tz}），最近的在前：")
        } else {
            format!("Your reminders ({tz}), soonest first:")
        };
        for j in live {
            let next = match (&j.schedule, j.state.next_run_at) {
                // A one-shot's schedule already says when.
                (Schedule::At { .. }, _) | (_, None) => String::new(),
                (_, Some(t)) if zh => format!("；下次 {}", day_and_time_in(t, tz, lang)),
                (_, Some(t)) => format!("; next {}", day_and_time(t, tz)),
            };
            let every = in_words_in(&j.schedule, tz, lang);
            match zh {
                true => out.push_str(&format!("\n• {}：「{}」，{every}{next}", j.id, j.message)),
                false => out.push_str(&format!("\n• {}: “{}”, {every}{next}", j.id, j.message)),
            }
        }
        if !paused.is_empty() {
            out.push_str(if zh { "\n已暂停：" } else { "\nPaused:" });
            for j in paused {
                let why = j.state.paused.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
                match zh {
                    true => out.push_str(&format!("\n• {}：「{}」{why}。/resume {}", j.id, j.message, j.id)),
                    false => out.push_str(&format!("\n• {}: “{}”{why}. /resume {}", j.id, j.message, j.id)),
                }
            }
        }
        out.push_str(if zh { "\n删除一条：/cancel <编号>" } else { "\nTo remove one: /cancel <id>" });
        out
    }

    pub(super) fn cancel(&self, id: &str, lang: Language) -> Answer {
        let zh = lang == Language::Chinese;
        let Some(id) = one_id(id) else {
            return Answer::Refused(which("cancel", lang));
        };
        let removed = self.jobs.store.update(|f| {
            let at = f.jobs.iter().position(|j| j.id == id)?;
            Some(f.jobs.remove(at))
        });
        match (removed, zh) {
            (Ok(Some(j)), true) => Answer::Done(format!("已删除 {id}：「{}」，不会再来了。", j.message)),
            (Ok(Some(j)), false) => Answer::Done(format!("Cancelled {id}: “{}”. It will not come again.", j.message)),
            (Ok(None), _) => Answer::Refused(no_such(id, lang)),
            (Err(e), true) => Answer::Refused(format!("没有改动：写不了你的提醒（{e}）。")),
            (Err(e), false) => Answer::Refused(format!("Nothing changed: I could not write your reminders ({e}).")),
        }
    }

    pub(super) fn pause(&self, id: &str, lang: Language) -> String {
        let zh = lang == Language::Chinese;
        let Some(id) = one_id(id) else { return which("pause", lang) };
        match (self.jobs.store.pause(id, "paused from the chat"), zh) {
            (Ok(PauseOutcome::Done), true) => format!("已暂停 {id}。恢复：/resume {id}"),
            (Ok(PauseOutcome::Done), false) => format!("Paused {id}. To start it again: /resume {id}"),
            (Ok(PauseOutcome::Already), true) => format!("{id} 已经暂停了。恢复：/resume {id}"),
            (Ok(PauseOutcome::Already), false) => format!("{id} is paused already. To start it again: /resume {id}"),
            (Ok(PauseOutcome::NoSuchJob), _) => no_such(id, lang),
            (Err(e), true) => format!("没有改动：写不了你的提醒（{e}）。"),
            (Err(e), false) => format!("Nothing changed: I could not write your reminders ({e})."),
        }
    }

    pub(super) fn resume(&self, id: &str, now: DateTime<Utc>, lang: Language) -> String {
        let zh = lang == Language::Chinese;
        let Some(id) = one_id(id) else { return which("resume", lang) };
        match self.jobs.store.resume(id, now) {
            Ok(PauseOutcome::Done) => {
                let next = self
                    .jobs
                    .store
                    .load()
                    .ok()
                    .and_then(|f| f.jobs.iter().find(|j| j.id == id).and_then(|j| j.state.next_run_at));
                let next = next.map(|t| day_and_time_in(t, self.jobs.tz, lang));
                match zh {
                    true => format!("已恢复 {id}。{}", next.map(|n| format!("下次：{n}。")).unwrap_or_default()),
                    false => format!("Resumed {id}.{}", next.map(|n| format!(" Next: {n}.")).unwrap_or_default()),
                }
            }
            Ok(PauseOutcome::Already) if zh => format!("{id} 没有暂停。"),
            Ok(PauseOutcome::Already) => format!("{id} is not paused."),
            Ok(PauseOutcome::NoSuchJob) => no_such(id, lang),
            Err(e) if zh => format!("没有改动：{e}"),
            Err(e) => format!("Nothing changed: {e}"),
        }
    }
}

/// The answer to `/cancel` (`/pause`, `/resume`) with no id.
fn which(command: &str, lang: Language) -> String {
    match lang {
        Language::English => format!("Say which one: /{command} <id> (/list shows the ids)."),
        Language::Chinese => format!("请说明是哪一条：/{command} <编号>（/list 会列出编号）。"),
    }
}

fn no_such(id: &str, lang: Language) -> String {
    match lang {
        Language::English => format!("There is no reminder {id}. /list shows yours."),
        Language::Chinese => format!("没有编号为 {id} 的提醒。/list 会列出你的提醒。"),
    }
}

/// The one id a command names (`/cancel ab12cd`), without stray punctuation.
fn one_id(text: &str) -> Option<&str> {
    let id = text.split_whitespace().next()?.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_');
    (!id.is_empty()).then_some(id)
}
