//! `on_cron_job` (spec §10): a fired job becomes a CRON-origin turn on the `cron:<job_id>`
//! conversation, and its reply is delivered per branch:
//! - one target: the turn runs on that channel and the reply goes to its one outlet;
//! - broadcast: the turn runs on the job's own ephemeral channel (`cron`), then the reply is
//!   delivered explicitly to every target;
//! - silent: the turn runs on `cron` and nobody is told.
//!
//! Targets are resolved at fire time, so a config change applies on the next fire: a real
//! channel passes through, an ephemeral one (`cli`, `tui`) expands to the configured forward
//! channels, and a channel given without a chat id takes the chat of its latest session.
//! Every fire also writes the NudgePolicy ledger (a cron fire on the job's topic) and a
//! neutral dispatched record, so the Sentinel does not repeat it and learns nothing from it.
//! A notice about the job itself (strike decay paused it) goes to the same targets the same
//! way, with a dispatched record but no ledger entry: it is not a fire.

use super::service::{FireJob, Fired};
use super::store::Job;
use crate::clock::SharedClock;
use crate::config::LiveConfig;
use crate::delivery::hub::{DeliveryHubService, Post};
use crate::feedback::{Dispatch, Source};
use crate::journal::{Event, Journal};
use crate::policy::{NudgePolicyService, RecordCronFire};
use crate::sessions::SessionStore;
use crate::spine::{Scheduler, TurnOutcome};
use crate::supervise::{Handle, LocalBoxFuture};
use raven_proto::{BusyPolicy, Origin, OutboundText, TurnRequest};
use std::rc::Rc;

/// Channels that live only while a terminal is attached.
pub const EPHEMERAL_CHANNELS: [&str; 2] = ["cli", "tui"];

/// Called with the job id after a fire.
pub type OnFired = Rc<dyn Fn(&str)>;

#[derive(Clone)]
pub struct CronTurns {
    pub scheduler: Scheduler,
    pub hub: Handle<DeliveryHubService>,
    pub policy: Handle<NudgePolicyService>,
    pub sessions: SessionStore,
    /// Read at each fire: `cron.forward_channels` follows config.toml without a restart.
    pub config: LiveConfig,
    pub clock: SharedClock,
    /// Told after each fire (the heartbeat's early wake).
    pub on_fired: Option<OnFired>,
    /// Each fire is a line of the decision journal.
    pub journal: Journal,
}

impl CronTurns {
    /// Where a job's written targets deliver now.
    pub fn resolve(&self, job: &Job) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let config = self.config.get();
        let forward = &config.cron.forward_channels;
        for target in job.target.iter().chain(&job.broadcast) {
            let (channel, chat_id) = raven_proto::split_target(target);
            let explicit = target.contains(':');
            let expanded: Vec<(String, Option<String>)> =
                if EPHEMERAL_CHANNELS.contains(&channel.as_str()) && !forward.is_empty() {
                    forward.iter().map(|f| split_explicit(f)).collect()
                } else {
                    vec![(channel, explicit.then_some(chat_id))]
                };
            for (channel, chat_id) in expanded {
                let chat_id =
                    chat_id.or_else(|| self.sessions.latest_chat(&channel)).unwrap_or_else(|| "default".to_owned());
                if !out.iter().any(|(c, id)| *c == channel && *id == chat_id) {
                    out.push((channel, chat_id));
                }
            }
        }
        out
    }

    /// The ledger's cron fire (so the Sentinel does not repeat the topic), and what each
    /// delivery records in its conversation: a reminder the user wrote, never rated.
    async fn record(&self, job: &Job, slot: chrono::DateTime<chrono::Utc>) -> Dispatch {
        let topic = topic_of(job);
        // Awaited, never dropped: a full mailbox must not let the Sentinel repeat the topic.
        let fire = RecordCronFire { topic: Some(topic), content: job.message.clone() };
        match self.policy.call_async(fire).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(job = %job.id, "the cron fire was not recorded in the ledger: {e}"),
            Err(e) => tracing::error!(job = %job.id, "the cron fire was not recorded, the policy is unavailable: {e}"),
        }
        dispatch(job, format!("cron-{}-{}", job.id, slot.timestamp()))
    }

    /// Posts `text` to each of `targets` as the proactive message `said` (one id per target,
    /// so a repeat is the same message to the outlets and the outbox); the targets reached.
    async fn deliver(
        &self,
        targets: &[(String, String)],
        text: &str,
        said: &Dispatch,
        expires: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Vec<String> {
        let job = said.job.as_deref().unwrap_or_default();
        let mut delivered_to = Vec::new();
        for (channel, chat_id) in targets {
            let id = format!("{}@{channel}:{chat_id}", said.nudge_id);
            let out = OutboundText::proactive(id, channel, chat_id, text);
            match self.hub.call_async(Post::proactive(out, None, said.clone()).expiring(expires)).await {
                Ok(Ok(to)) => delivered_to.push(to),
                Ok(Err(e)) => tracing::warn!(job, "cron message to {channel}:{chat_id}: {e}"),
                Err(e) => tracing::error!(job, "delivery hub unavailable: {e}"),
            }
        }
        delivered_to
    }
}

/// The topic a job's messages are filed under: its own, or the one its message reads as.
fn topic_of(job: &Job) -> String {
    job.topic.clone().unwrap_or_else(|| crate::policy::topic::topic_of(&job.message))
}

/// The record of a message of `job` with id `nudge_id`: a reminder the user wrote, never rated.
fn dispatch(job: &Job, nudge_id: String) -> Dispatch {
    Dispatch {
        nudge_id,
        topic: topic_of(job),
        priority: raven_proto::Priority::Low,
        source: Source::Cron,
        job: Some(job.id.clone()),
        items: Vec::new(),
    }
}

fn split_explicit(target: &str) -> (String, Option<String>) {
    let (channel, chat_id) = raven_proto::split_target(target);
    let explicit = target.contains(':');
    (channel, explicit.then_some(chat_id))
}

impl FireJob for CronTurns {
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired> {
        let this = self.clone();
        Box::pin(async move {
            let now = this.clock.now();
            let targets = this.resolve(&job);
            let slot = job.state.claim.map(|c| c.slot).unwrap_or(now);
            let (channel, chat_id) = match targets.as_slice() {
                [one] => one.clone(),
                _ => ("cron".to_owned(), job.id.clone()),
            };
            let req = TurnRequest::new(
                format!("cron-{}-{}", job.id, slot.timestamp()),
                Origin::Cron,
                format!("cron:{}", job.id),
                channel,
                chat_id,
                job.message.clone(),
                BusyPolicy::Append,
                now,
            );
            let (_, rx) = this.scheduler.submit_wait(req);
            // A reminder is never lost to a model outage: the job's own words go out instead.
            let own_words = || {
                let lang = this.config.get().general.language.resolve(&job.message);
                crate::context::words::job_reminder(&job.message, lang)
            };
            let reply = match rx.await {
                Ok(TurnOutcome::Replied(text) | TurnOutcome::Refused(text)) => text,
                Ok(TurnOutcome::Failed(e)) => {
                    tracing::warn!(job = %job.id, "cron turn failed, delivering the job's text: {e}");
                    own_words()
                }
                Ok(TurnOutcome::Interrupted) | Err(_) => own_words(),
            };
            let said = this.record(&job, slot).await;
            // Not delivered by its next slot (a one-shot: within a day), a reminder is stale.
            let next = job.schedule.parse().ok().filter(|_| job.schedule.recurring()).and_then(|p| p.next_after(slot));
            let expires = next.unwrap_or(slot + chrono::Duration::hours(24));
            // One id per job, slot and target: a fire repeated after a crash is the same
            // message, which the outlets and the outbox deliver once; each broadcast target
            // gets its own.
            let delivered_to = this.deliver(&targets, &reply, &said, Some(expires)).await;
            this.journal.record(now, Some("cron"), Event::cron(&job.id, &delivered_to));
            if let Some(f) = &this.on_fired {
                f(&job.id);
            }
            Fired { delivered_to, reply: Some(reply) }
        })
    }

    /// The notice goes out as written (no turn: it is about the job, not the reminder), once
    /// per pause, with no expiry: it stays true until the job is resumed.
    fn tell(&self, job: Job, text: String) -> LocalBoxFuture<'static, Vec<String>> {
        let this = self.clone();
        Box::pin(async move {
            let said = dispatch(&job, format!("cron-{}-paused-{}", job.id, this.clock.now().timestamp()));
            this.deliver(&this.resolve(&job), &text, &said, None).await
        })
    }
}
