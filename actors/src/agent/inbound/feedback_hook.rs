//! The feedback replies as an inbound hook: after a pending question and a menu pick, and
//! before the agent, a recognised `/ok`, `/stop`, `/later` or `/snooze` is answered here, with no LLM.

use super::commands::{parse, CommandCtx};
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
}

impl InboundHook for FeedbackReplies {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
        Box::pin(async move {
            let cmd = parse(&req.content)?;
            let session = format!("{}:{}", req.channel, req.chat_id);
            let ctx = CommandCtx {
                tracker: &self.tracker,
                jobs: Some(&self.jobs),
                verdicts: Some(&self.verdicts),
                session: Some(&session),
                tz: self.tz,
                now: self.clock.now(),
            };
            Some(match cmd.and_then(|c| ctx.apply(&c)) {
                Ok(answer) => crate::sessions::Answer::Done(answer),
                Err(e) => crate::sessions::Answer::Refused(format!("Nothing recorded: {e}")),
            })
        })
    }
}
