//! The feedback replies as an inbound hook: after a pending question and a menu pick, and
//! before the agent, a recognised `/ok`, `/stop`, `/later` or `/snooze` is answered here, with no LLM;
//! so is a short message asking for quiet in words (see [`super::hush`]) or saying a heads-up
//! came too late (see [`super::late`]).

use super::commands::{parse, CommandCtx, FeedbackCommand};
use super::{hush, late};
use crate::clock::SharedClock;
use crate::cron::store::JobsStore;
use crate::feedback::NudgeFeedbackTracker;
use crate::sessions::InboundHook;
use chrono_tz::Tz;
use futures_util::future::LocalBoxFuture;
use raven_proto::TurnRequest;
use std::rc::Rc;

pub struct FeedbackReplies {
    pub tracker: Rc<NudgeFeedbackTracker>,
    pub jobs: JobsStore,
    /// What `/later` schedules with.
    pub verdicts: Rc<crate::cron::later::Verdicts>,
    pub tz: Tz,
    pub clock: SharedClock,
    /// `general.language`, and the notes `auto` reads it from: the answers' language.
    pub language: crate::time::LanguageSetting,
    pub memory: std::path::PathBuf,
    /// The user's morning (the morning brief's time: when quiet hours end, or 08:00 with
    /// none): a request for quiet in words lasts until the next one.
    pub morning: chrono::NaiveTime,
}

impl InboundHook for FeedbackReplies {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
        Box::pin(async move {
            let session = format!("{}:{}", req.channel, req.chat_id);
            let cmd = match parse(&req.content) {
                Some(cmd) => cmd,
                // "Too late" where a heads-up told ahead by its kind came lately is `/earlier`.
                None if late::says_too_late(&req.content) => Ok(FeedbackCommand::Earlier(None)),
                None => return self.hush(&req.content),
            };
            let ctx = CommandCtx {
                tracker: &self.tracker,
                jobs: Some(&self.jobs),
                verdicts: Some(&self.verdicts),
                session: Some(&session),
                tz: self.tz,
                now: self.clock.now(),
                lang: super::language::of_answer(&req.content, self.language, &self.memory),
            };
            if matches!(cmd, Ok(FeedbackCommand::Earlier(None)))
                && !req.content.starts_with('/')
                && !ctx.told_ahead_here()
            {
                return None;
            }
            Some(match cmd.and_then(|c| ctx.apply(&c)) {
                Ok(answer) => crate::sessions::Answer::Done(answer),
                Err(e) => crate::sessions::Answer::Refused(format!("Nothing recorded: {e}")),
            })
        })
    }
}

impl FeedbackReplies {
    /// A request for quiet in words: snoozed until the next morning, and said so.
    fn hush(&self, text: &str) -> Option<crate::sessions::Answer> {
        if !hush::asks_for_quiet(text) {
            return None;
        }
        let now = self.clock.now();
        let until = hush::until(now, self.tz, self.morning);
        let lang = crate::time::Language::of_notes(text);
        Some(match self.tracker.record_snooze(until, now) {
            Ok(()) => crate::sessions::Answer::Done(hush::answer(until, now, self.tz, lang)),
            Err(e) => crate::sessions::Answer::Refused(format!("Nothing recorded: {e}")),
        })
    }
}
