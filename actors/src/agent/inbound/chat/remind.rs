//! `/remind <when> <text>`, read here by the one time parser, never by a model: the time may
//! come first (`/remind tomorrow at 9 dentist`) or last (`/remind call mum at 7pm`), and two times
//! of one reminder are two jobs (`/remind every day at 9am and 5pm meds`). The answer says what
//! was understood: the text, the schedule in words in the user's zone, the next time, the id,
//! and whether it can pause for want of replies. Input that was not all used is refused with
//! what was read.

use super::ChatCommands;
use crate::cron::store::Job;
use crate::cron::tool::{schedule_of, NewJob};
use crate::cron::words::{day_and_time, day_and_time_in, in_words, in_words_in};
use crate::sessions::Answer;
use crate::time::{parse_when, split_when, Language, When};
use chrono::{DateTime, Utc};

/// The longest reminder text kept (a chat message, not a document).
const MAX_TEXT: usize = 1_000;

const USAGE: &str = "Write it as /remind <when> <text>, e.g. /remind in 1h 30m stretch, /remind tomorrow at 9 dentist, /remind every weekday at 8:30 standup.";
const USAGE_ZH: &str = "这样写：/remind <时间> <内容>，例如 /remind 半小时后 拉伸，/remind 明天上午9点 看牙医，/remind 每个工作日 8:30 站会。";

fn usage(lang: Language) -> &'static str {
    match lang {
        Language::English => USAGE,
        Language::Chinese => USAGE_ZH,
    }
}

/// What a `/remind` was read as: one or more times, and the text.
#[derive(Debug)]
struct Reading {
    whens: Vec<When>,
    text: String,
}

impl ChatCommands {
    /// Schedules the reminder, or refuses it saying what was read and why.
    pub(super) fn remind(&self, rest: &str, session: &str, now: DateTime<Utc>, lang: Language) -> Answer {
        if rest.is_empty() {
            return Answer::Refused(usage(lang).into());
        }
        let reading = match self.read(rest, now) {
            Ok(r) => r,
            Err(why) => return Answer::Refused(format!("{why}\n{}", usage(lang))),
        };
        let length = reading.text.chars().count();
        if length > MAX_TEXT {
            return Answer::Refused(format!(
                "A reminder's text is at most {MAX_TEXT} characters; this one has {length}. Nothing scheduled."
            ));
        }
        let mut made = Vec::new();
        for when in reading.whens {
            let new = NewJob {
                message: reading.text.clone(),
                schedule: schedule_of(when, now),
                target: Some(session.to_owned()),
                broadcast: Vec::new(),
                topic: None,
            };
            match self.jobs.insert(new, now) {
                Ok(job) => made.push(job),
                Err(e) => return Answer::Refused(self.not_all(&made, &e.to_string())),
            }
        }
        let mut said = match lang {
            Language::English => self.confirm(&made, now),
            Language::Chinese => self.confirm_zh(&made, now),
        };
        let next = made.first().and_then(|j| j.state.next_run_at);
        if let Some(gap) = next.and_then(|at| crate::time::skipped_clock(rest, at, self.jobs.tz)) {
            said.push_str(&format!("\nNote: {gap}"));
        }
        Answer::Done(said)
    }

    /// The time first, else last; a second time after `and` makes a second job.
    // A `String` error: the answer the user reads in the chat.
    fn read(&self, rest: &str, now: DateTime<Utc>) -> Result<Reading, String> {
        let (tz, order) = (self.jobs.tz, self.jobs.order);
        let (when, text) = match split_when(rest, now, tz, order) {
            Ok(found) => found,
            Err(first) => {
                return self.time_last(rest, now).ok_or_else(|| format!("I could not read the time: {first}"))
            }
        };
        let read_as = rest[..rest.len() - text.len()].trim();
        let Some(after) = strip_word(text, "and") else {
            return Ok(Reading { whens: vec![when], text: text.trim().to_owned() });
        };
        match split_when(&format!("{} {after}", time_base(read_as)), now, tz, order) {
            // The second time must be read from the words after `and`, not from the base alone.
            Ok((second, rest)) if rest.len() < after.len() => {
                Ok(Reading { whens: vec![when, second], text: rest.trim().to_owned() })
            }
            _ => Err(format!(
                "I read the time as “{read_as}” and the text as “{text}”, which starts like a second time. Nothing scheduled: send one /remind for each time."
            )),
        }
    }

    /// `call mum at 7pm`: the longest tail of the words that is a whole time expression.
    fn time_last(&self, rest: &str, now: DateTime<Utc>) -> Option<Reading> {
        let words: Vec<&str> = rest.split_whitespace().collect();
        (1..words.len()).find_map(|i| {
            let when = parse_when(&words[i..].join(" "), now, self.jobs.tz, self.jobs.order).ok()?;
            Some(Reading { whens: vec![when], text: words[..i].join(" ") })
        })
    }

    fn confirm(&self, made: &[Job], now: DateTime<Utc>) -> String {
        let tz = self.jobs.tz;
        let Some(first) = made.first() else { return "Nothing scheduled.".into() };
        let mut out = match made.len() {
            1 => format!("Reminder set: “{}”\nWhen: {} ({tz})", first.message, in_words(&first.schedule, tz)),
            _ => format!("Reminders set: “{}” ({tz})", first.message),
        };
        for job in made {
            let next = job.state.next_run_at.map(|t| day_and_time(t, tz)).unwrap_or_else(|| "none".into());
            match made.len() {
                1 => out.push_str(&format!("\nNext: {next}\nId: {} (/cancel {} removes it)", job.id, job.id)),
                _ => out.push_str(&format!(
                    "\n• {}: {}; next {next} (/cancel {})",
                    job.id,
                    in_words(&job.schedule, tz),
                    job.id
                )),
            }
        }
        if made.iter().any(|j| self.can_pause(j, now)) {
            out.push_str(&format!(
                "\nIf {} in a row go unanswered, I pause it and tell you; any reply here resets the count.",
                self.strikes.limit
            ));
        }
        out
    }

    /// [`Self::confirm`] in Chinese.
    fn confirm_zh(&self, made: &[Job], now: DateTime<Utc>) -> String {
        let (tz, zh) = (self.jobs.tz, Language::Chinese);
        let Some(first) = made.first() else { return "没有设置任何提醒。".into() };
        let mut out = match made.len() {
            1 => format!("提醒已设：「{}」\n时间：{}（{tz}）", first.message, in_words_in(&first.schedule, tz, zh)),
            _ => format!("提醒已设：「{}」（{tz}）", first.message),
        };
        for job in made {
            let next = job.state.next_run_at.map(|t| day_and_time_in(t, tz, zh)).unwrap_or_else(|| "无".into());
            match made.len() {
                1 => out.push_str(&format!("\n下次：{next}\n编号：{}（发 /cancel {} 删除）", job.id, job.id)),
                _ => out.push_str(&format!(
                    "\n• {}：{}；下次 {next}（/cancel {}）",
                    job.id,
                    in_words_in(&job.schedule, tz, zh),
                    job.id
                )),
            }
        }
        if made.iter().any(|j| self.can_pause(j, now)) {
            out.push_str(&format!(
                "\n如果连续 {} 次没有回应，我会暂停它并告诉你；在这里回任何消息都会重新计数。",
                self.strikes.limit
            ));
        }
        out
    }

    /// Whether `job` counts strikes (its times come closer than `cron.strike_min_gap_s`).
    fn can_pause(&self, job: &Job, now: DateTime<Utc>) -> bool {
        let gap = job.schedule.parse().ok().and_then(|p| p.shortest_gap(now));
        self.strikes.limit > 0 && gap.is_some_and(|g| g < self.strikes.min_gap)
    }

    /// Some jobs made, then one refused: say both.
    fn not_all(&self, made: &[Job], why: &str) -> String {
        match made {
            [] => format!("Nothing scheduled: {why}"),
            _ => {
                let ids: Vec<&str> = made.iter().map(|j| j.id.as_str()).collect();
                format!("Scheduled {} only; the next time was refused: {why}", ids.join(", "))
            }
        }
    }
}

/// `text` after a leading `word` (any case) and a space.
fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let text = text.trim_start();
    let (head, rest) = text.split_once(char::is_whitespace)?;
    head.eq_ignore_ascii_case(word).then(|| rest.trim_start())
}

/// What comes before the clock time of `every day at 9am` (`every day at`), so a second time
/// reads with the same recurrence; `at` for a bare `at 9am`, nothing for `9am`.
fn time_base(read_as: &str) -> &str {
    let lower = read_as.to_ascii_lowercase();
    match lower.rfind(" at ") {
        Some(i) => &read_as[..i + 3],
        None if lower.starts_with("at ") => &read_as[..2],
        None => "",
    }
}
