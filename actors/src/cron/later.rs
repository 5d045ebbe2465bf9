//! "Later" on a proactive message (the ⏰ button under it, a ⏰ reaction, a push notification's
//! later tap, `POST /feedback {"verdict": "later"}`, `raven feedback <id> later`): no rating,
//! a request to be told again. The message is recorded `later` in the feedback log (it settles
//! its no-reply timer and counts neither for nor against its topic), and a one-shot job sends
//! its text again to the same conversation after `feedback.later_minutes` (60), or at the end
//! of the quiet hours when that would land in them. The job is an ordinary reminder: `/list`
//! shows it and `/cancel` removes it.
//!
//! Every surface gives its verdicts through [`Verdicts::give`]: `later` here, the others
//! through [`crate::feedback::give`].

use super::store::Schedule;
use super::tool::{JobsCron, NewJob};
use crate::config::{RavenConfig, Window};
use crate::data_dir::DataDir;
use crate::feedback::give::{give, message_of, GiveError, GiveFeedback, Given};
use crate::feedback::{short_id, FeedbackRecord, NudgeFeedbackTracker};
use crate::time::Language;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

/// The verdict that puts a message off.
pub const LATER: &str = "later";

/// What giving a verdict needs beyond the feedback log: the user's jobs, for `later`.
pub struct Verdicts {
    jobs: JobsCron,
    after: Duration,
    quiet: Vec<Window>,
}

impl Verdicts {
    /// The jobs of `dir`, and the wait and the quiet hours of `config`.
    pub fn of(dir: &DataDir, config: &RavenConfig) -> Verdicts {
        let jobs = JobsCron {
            store: super::store::JobsStore::new(dir.jobs()),
            tz: config.general.timezone,
            order: config.general.date_order,
            channels: crate::delivery::targets::Channels::of(config),
        };
        let quiet = std::iter::once(config.policy.quiet_hours).chain(config.policy.extra_quiet_hours.clone()).collect();
        Verdicts { jobs, after: Duration::minutes(config.feedback.later_minutes.max(1)), quiet }
    }

    pub fn tz(&self) -> Tz {
        self.jobs.tz
    }

    /// Records `req`'s verdict; `later` also schedules the message again.
    pub fn give(
        &self,
        tracker: &NudgeFeedbackTracker,
        req: &GiveFeedback,
        now: DateTime<Utc>,
    ) -> Result<Given, GiveError> {
        if req.verdict.trim() != LATER {
            return give(tracker, req, now);
        }
        let sent = message_of(tracker, req, now, true)?;
        let at = self.again_at(now);
        let job = self.schedule_again(&sent, at, now)?;
        tracker.record_later(&sent, at, &job, now)?;
        let short = short_id(&sent.nudge_id);
        Ok(Given {
            nudge_id: sent.nudge_id,
            short_id: short,
            verdict: LATER.to_owned(),
            topic: sent.topic,
            undo: format!("raven cron rm {job}"),
            again_at: Some(at),
            again_job: Some(job),
        })
    }

    /// `now` plus the wait, moved to the end of the quiet hours it would land in.
    fn again_at(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let mut at = now + self.after;
        // Five-minute steps through at most a day: the end of the quiet window(s) at `at`.
        for _ in 0..288 {
            let local = at.with_timezone(&self.jobs.tz).time();
            if !self.quiet.iter().any(|w| w.contains(local)) {
                break;
            }
            at += Duration::minutes(5);
        }
        at
    }

    /// The one-shot job that sends `sent`'s text again at `at`, to its conversation.
    fn schedule_again(
        &self,
        sent: &FeedbackRecord,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<String, GiveError> {
        let Some(session) = sent.session.clone() else {
            return Err(GiveError::NotPutOff("it reached no conversation to send it again to".into()));
        };
        let message = match (&sent.text, &sent.topic) {
            (Some(text), _) => text.clone(),
            (None, Some(topic)) => format!("Later, as you asked: {topic}"),
            (None, None) => return Err(GiveError::NotPutOff("its text was not kept".into())),
        };
        let new = NewJob {
            message,
            schedule: Schedule::At { at },
            target: Some(session),
            broadcast: Vec::new(),
            topic: sent.topic.clone(),
        };
        self.jobs.insert(new, now).map(|job| job.id).map_err(|e| GiveError::NotPutOff(e.to_string()))
    }
}

/// What a chat answers to a verdict given by a button, a reaction or a tap, at `now`.
pub fn said(given: &Given, tz: Tz, now: DateTime<Utc>) -> String {
    said_in(given, tz, now, Language::English)
}

/// [`said`] in `lang`: `好的，晚点：我会在明天 07:00 再发一次（任务 k3x9p2；/cancel k3x9p2 取消）。`
pub fn said_in(given: &Given, tz: Tz, now: DateTime<Utc>, lang: Language) -> String {
    let about = given.topic.clone().unwrap_or_else(|| given.short_id.clone());
    match (given.again_at, &given.again_job, lang) {
        (Some(at), Some(job), Language::English) => {
            format!("Later, then: I'll send it again {} (job {job}; /cancel {job} to drop it).", when(at, tz, now))
        }
        (Some(at), Some(job), Language::Chinese) => {
            format!("好的，晚点：我会在{} 再发一次（任务 {job}；/cancel {job} 取消）。", when_zh(at, tz, now))
        }
        (_, _, Language::English) => format!("Noted: {} ({about}).", given.verdict),
        (_, _, Language::Chinese) => format!("已记录：{}（{about}）。", given.verdict),
    }
}

/// `今天 13:00`, `明天 07:00`, else `12月11日（周五）07:00`, in `tz`.
fn when_zh(at: DateTime<Utc>, tz: Tz, now: DateTime<Utc>) -> String {
    let (day, today) = (at.with_timezone(&tz).date_naive(), now.with_timezone(&tz).date_naive());
    let hm = at.with_timezone(&tz).format("%H:%M");
    match (day - today).num_days() {
        0 => format!("今天 {hm}"),
        1 => format!("明天 {hm}"),
        _ => format!("{}{hm}", crate::context::words::date_zh(day)),
    }
}

/// `at 13:00` today, `tomorrow at 07:00`, else `on Fri at 07:00`, in `tz`.
fn when(at: DateTime<Utc>, tz: Tz, now: DateTime<Utc>) -> String {
    let (day, today) = (at.with_timezone(&tz).date_naive(), now.with_timezone(&tz).date_naive());
    let hm = at.with_timezone(&tz).format("%H:%M");
    match (day - today).num_days() {
        0 => format!("at {hm}"),
        1 => format!("tomorrow at {hm}"),
        _ => format!("on {} at {hm}", at.with_timezone(&tz).format("%a %-d %b")),
    }
}

#[cfg(test)]
#[path = "later_tests.rs"]
mod tests;
