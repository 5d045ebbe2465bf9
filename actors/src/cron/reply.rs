//! A user's message on a conversation a job delivers to is a reply to that job: its strikes
//! are forgiven, and a job strike decay paused fires again from its next slot. A job the user
//! stopped (`/stop`) stays stopped; only `raven cron resume` lifts that.

use super::pause::{resume_job, Paused};
use super::store::{Job, JobsFile, JobsStore};
use chrono::{DateTime, Utc};

/// Whether `job` delivers to `session` (`channel:chat_id`). A bare channel target means "that
/// channel's latest chat": any chat there counts.
fn delivers_to(job: &Job, session: &str) -> bool {
    let (channel, chat_id) = raven_proto::split_target(session);
    job.target.iter().chain(&job.broadcast).any(|t| {
        let (c, id) = raven_proto::split_target(t);
        c == channel && (!t.contains(':') || id == chat_id)
    })
}

/// A job paused by strike decay fires again from its next slot after `now`; one whose
/// schedule gives no next time any more is set aside with that reason instead. A job
/// disabled by hand stays disabled.
fn lift_strike_pause(job: &mut Job, now: DateTime<Utc>) {
    if !job.enabled || !matches!(job.state.paused, Some(Paused::Strikes { .. })) {
        return;
    }
    match resume_job(job, now) {
        Ok(()) => tracing::info!(job = %job.id, "resumed by a reply on its conversation"),
        Err(reason) => job.state.paused = Some(reason),
    }
}

/// A user reply on `session` at `now`: the jobs delivering there have their strikes reset, and
/// those strike decay paused are resumed.
pub fn user_replied(file: &mut JobsFile, session: &str, now: DateTime<Utc>) {
    for job in file.jobs.iter_mut().filter(|j| delivers_to(j, session)) {
        job.state.strikes = 0;
        lift_strike_pause(job, now);
    }
}

/// The agent's user-inbound hook that takes a message as a reply to the jobs delivering to its
/// conversation; it never consumes the message.
pub struct JobReplies(pub JobsStore);

impl crate::sessions::InboundHook for JobReplies {
    fn on_user_message<'a>(
        &'a self,
        req: &'a raven_proto::TurnRequest,
    ) -> futures_util::future::LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
        let session = format!("{}:{}", req.channel, req.chat_id);
        if let Err(e) = self.0.update(|f| user_replied(f, &session, req.created_at)) {
            tracing::warn!("cron strikes not reset: {e}");
        }
        Box::pin(async { None })
    }
}

#[cfg(test)]
mod tests;
