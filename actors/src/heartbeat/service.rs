//! HeartbeatService (spec §11): the timer-driven review of HEARTBEAT.md, as a supervised
//! actor, and its loop.
//!
//! A tick has two phases. Phase one reads HEARTBEAT.md (missing or blank: skip, no LLM
//! call) and asks the provider, through the forced `heartbeat_decision` tool, whether any
//! task is active. Phase two, only on `run`, submits ONE HEARTBEAT-origin turn through the
//! spine (the full agent loop) and posts its reply to the configured targets through the
//! DeliveryHub. Ticks never overlap: a manual tick and the loop's queue behind each other.
//!
//! The loop ticks every `interval_s` and ends its sleep early on a wake (see `wake`): the
//! guard and the parking while user turns are in flight are the WakeScheduler's.

use super::decision::{self, Decision};
use super::wake::WakeHandle;
use super::HeartbeatConfig;
use crate::clock::SharedClock;
use crate::delivery::hub::{DeliveryHubService, Post};
use crate::feedback::{Dispatch, Source};
use crate::journal::{Event, HeartbeatRun, Journal};
use crate::llm::provider::SharedProvider;
use crate::policy::{dispatch_through, Check, Gated, Nudge, NudgePolicyService};
use crate::spine::{Scheduler, TurnOutcome};
use crate::supervise::{Handle, LocalBoxFuture, Request, Serve, ServeAsync, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::{split_target, BusyPolicy, Origin, OutboundText, TurnRequest};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;

/// The lane of the heartbeat's turns (and the session its agent turns are kept in).
pub const CONVERSATION: &str = "heartbeat:main";

/// What the service needs; the engine builds it.
pub struct HeartbeatDeps {
    /// Phase one's provider (the same as the agent's, or the embedded rules).
    pub provider: SharedProvider,
    /// `DataDir::heartbeat()`: workspace/HEARTBEAT.md.
    pub heartbeat_md: PathBuf,
    /// Phase two's turns go through it; its user-turn count parks wakes.
    pub scheduler: Scheduler,
    pub hub: Handle<DeliveryHubService>,
    /// Who gets a run's reply: `channel:chat_id` each.
    pub targets: crate::executor::dispatcher::DefaultTargets,
    pub clock: SharedClock,
    pub cfg: HeartbeatConfig,
    /// The wake shared with the producers and the loop.
    pub wake: WakeHandle,
    /// The shared gate: a heartbeat reaches the user only through it (quiet hours, quotas,
    /// dedup), like any proactive message. `None` only in tests of the service alone.
    pub policy: Option<Handle<NudgePolicyService>>,
    /// Each tick is a line of the decision journal.
    pub journal: Journal,
}

struct Inner {
    deps: HeartbeatDeps,
    seq: Cell<u64>,
    /// Held for a whole tick: two ticks never overlap.
    one_at_a_time: tokio::sync::Mutex<()>,
    /// The reason of the last tick's skip, when it was one: the same skip again is not
    /// written to the journal again (a missing HEARTBEAT.md would write a line every tick).
    last_skip: std::cell::RefCell<Option<String>>,
}

pub struct HeartbeatService {
    inner: Rc<Inner>,
}

impl HeartbeatService {
    /// Also makes `deps.wake` follow `deps.scheduler`'s user turns (busy check and the
    /// turn-complete release of a parked wake).
    pub fn new(deps: HeartbeatDeps) -> Self {
        deps.wake.follow_user_turns(&deps.scheduler, deps.clock.clone());
        let inner = Inner { deps, seq: Cell::new(0), one_at_a_time: Default::default(), last_skip: Default::default() };
        HeartbeatService { inner: Rc::new(inner) }
    }
}

impl Service for HeartbeatService {
    fn name(&self) -> &'static str {
        "Heartbeat"
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeartbeatOutcome {
    /// No turn ran: no file, a blank one, a `skip` decision, or an answer that was not a
    /// well-formed `heartbeat_decision` call.
    Skipped { reason: String },
    /// One turn ran; its reply went to `delivered_to` (the targets whose outlet took it).
    Ran { reply: String, delivered_to: Vec<String> },
    /// The provider or the turn failed, or HEARTBEAT.md could not be read.
    Failed(String),
}

impl HeartbeatOutcome {
    /// Its line of the decision journal.
    pub fn event(&self) -> Event {
        let (outcome, reason, delivered_to) = match self {
            HeartbeatOutcome::Skipped { reason } => ("skipped", Some(reason.clone()), Vec::new()),
            HeartbeatOutcome::Ran { delivered_to, .. } => ("ran", None, delivered_to.clone()),
            HeartbeatOutcome::Failed(why) => ("failed", Some(why.clone()), Vec::new()),
        };
        Event::Heartbeat(HeartbeatRun { outcome: outcome.to_owned(), reason, delivered_to })
    }
}

/// One heartbeat tick, now (asked for: a wake, a test); its journal line is always written.
pub struct HeartbeatTick;

/// The loop's tick on its interval: a [`HeartbeatTick`] whose skip is not written to the
/// journal again when it is the same as the last tick's (a missing HEARTBEAT.md would write
/// a line every half hour, hiding the decisions).
pub struct IntervalTick;

impl Request for HeartbeatTick {
    type Reply = HeartbeatOutcome;
    fn failed(r: &HeartbeatOutcome) -> bool {
        matches!(r, HeartbeatOutcome::Failed(_))
    }
}

impl Request for IntervalTick {
    type Reply = HeartbeatOutcome;
    fn failed(r: &HeartbeatOutcome) -> bool {
        matches!(r, HeartbeatOutcome::Failed(_))
    }
}

impl ServeAsync<HeartbeatTick> for HeartbeatService {
    fn serve_async(&mut self, _: HeartbeatTick) -> LocalBoxFuture<'static, HeartbeatOutcome> {
        self.inner.clone().journaled_tick(false)
    }
}

impl ServeAsync<IntervalTick> for HeartbeatService {
    fn serve_async(&mut self, _: IntervalTick) -> LocalBoxFuture<'static, HeartbeatOutcome> {
        self.inner.clone().journaled_tick(true)
    }
}

/// When the loop will tick next (`None` when no loop runs).
pub struct NextHeartbeat;

impl Request for NextHeartbeat {
    type Reply = Option<DateTime<Utc>>;
}

impl Serve<NextHeartbeat> for HeartbeatService {
    fn serve(&mut self, _: NextHeartbeat) -> Option<DateTime<Utc>> {
        self.inner.deps.wake.next_heartbeat()
    }
}

/// A producer's wake request, for those on another thread or behind the control socket
/// (same-thread producers can call `WakeHandle::request_wake_now` directly).
pub struct RequestWake {
    /// Why, for the logs: `cron:<job_id> done`, `subagent done`, `manual`.
    pub reason: String,
}

impl Request for RequestWake {
    type Reply = ();
}

impl Serve<RequestWake> for HeartbeatService {
    fn serve(&mut self, RequestWake { reason }: RequestWake) {
        self.inner.deps.wake.request_wake_now(reason, self.inner.deps.clock.now());
    }
}

/// The turn's message: the active tasks, one `- ` line each.
pub fn turn_content(tasks: &[String]) -> String {
    let mut out = String::from(
        "Heartbeat check: work through these open tasks from HEARTBEAT.md, then report briefly \
         what you did and what still needs the user.",
    );
    for t in tasks {
        out.push_str("\n- ");
        out.push_str(t);
    }
    out
}

impl Inner {
    /// A tick and its journal line (`quiet_repeat`: none for the same skip as the last tick's).
    fn journaled_tick(self: Rc<Self>, quiet_repeat: bool) -> LocalBoxFuture<'static, HeartbeatOutcome> {
        Box::pin(async move {
            let outcome = self.tick().await;
            if self.news(&outcome) || !quiet_repeat {
                self.deps.journal.record(self.deps.clock.now(), Some("heartbeat"), outcome.event());
            }
            outcome
        })
    }

    /// Whether `outcome` is news for the journal: anything but the same skip as the last tick's.
    fn news(&self, outcome: &HeartbeatOutcome) -> bool {
        let mut last = self.last_skip.borrow_mut();
        match outcome {
            HeartbeatOutcome::Skipped { reason } if last.as_deref() == Some(reason) => false,
            HeartbeatOutcome::Skipped { reason } => {
                *last = Some(reason.clone());
                true
            }
            _ => {
                *last = None;
                true
            }
        }
    }

    async fn tick(&self) -> HeartbeatOutcome {
        let _tick = self.one_at_a_time.lock().await;
        let d = &self.deps;
        if !d.cfg.enabled {
            return HeartbeatOutcome::Skipped { reason: "heartbeat disabled".into() };
        }
        // The wakes asked for so far are served by this tick, which reads the file afresh.
        d.wake.fired(d.clock.now());
        let text = match std::fs::read_to_string(&d.heartbeat_md) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return HeartbeatOutcome::Skipped { reason: "no HEARTBEAT.md".into() }
            }
            Err(e) => return HeartbeatOutcome::Failed(format!("{}: {e}", d.heartbeat_md.display())),
        };
        if decision::is_blank(&text) {
            return HeartbeatOutcome::Skipped { reason: "HEARTBEAT.md is blank".into() };
        }
        // Not now (quiet hours, a do-not-disturb window, the day's quota): no LLM call either.
        if let (Some(policy), Some(target)) = (&d.policy, d.targets.get().first()) {
            // A probe of the time-based layers; its topic is never charged.
            let probe = gate_nudge(target, "heartbeat review".into(), "heartbeat review".into());
            match policy.call(Check(probe)).await {
                Ok(v) if !v.allow => {
                    let layer = v.layer.map(|l| format!(" (layer {})", l.number())).unwrap_or_default();
                    return HeartbeatOutcome::Skipped { reason: format!("the gate{layer}: {}", v.reason) };
                }
                Ok(_) => {}
                Err(e) => return HeartbeatOutcome::Failed(format!("the gate is unavailable: {e}")),
            }
        }
        let reply = match d.provider.complete(&decision::request(&text, &d.provider.prompt_budget())).await {
            Ok(r) => r,
            Err(e) => return HeartbeatOutcome::Failed(format!("{}: {e}", decision::TOOL_NAME)),
        };
        match decision::parse(&reply) {
            Decision::Skip { reason } => HeartbeatOutcome::Skipped { reason },
            Decision::Run { tasks, .. } => self.run(&tasks).await,
        }
    }

    /// Phase two: one turn through the spine, its reply to every target.
    async fn run(&self, tasks: &[String]) -> HeartbeatOutcome {
        let d = &self.deps;
        let now = d.clock.now();
        self.seq.set(self.seq.get() + 1);
        let id = format!("heartbeat-{}-{}-{}", std::process::id(), now.timestamp_millis(), self.seq.get());
        let (channel, chat_id) = split_target(CONVERSATION);
        let req = TurnRequest::new(
            id.clone(),
            Origin::Heartbeat,
            CONVERSATION,
            channel,
            chat_id,
            turn_content(tasks),
            BusyPolicy::Append,
            now,
        );
        let (_, outcome) = d.scheduler.submit_wait(req);
        let reply = match outcome.await {
            Ok(TurnOutcome::Replied(r) | TurnOutcome::Refused(r)) => r,
            Ok(TurnOutcome::Failed(e)) => return HeartbeatOutcome::Failed(format!("heartbeat turn failed: {e}")),
            Ok(TurnOutcome::Interrupted) => return HeartbeatOutcome::Failed("heartbeat turn interrupted".into()),
            Err(_) => return HeartbeatOutcome::Failed("heartbeat turn ended without an outcome".into()),
        };
        // The tasks are the topic: the same open tasks again are a repeat to the gate.
        let topic = crate::policy::topic::topic_of(&tasks.join(" "));
        let mut delivered_to = Vec::new();
        for target in &d.targets.get() {
            let (channel, chat_id) = split_target(target);
            let text = OutboundText::proactive(format!("{id}-{target}"), &channel, &chat_id, reply.clone());
            let said = Dispatch {
                nudge_id: id.clone(),
                topic: topic.clone(),
                priority: raven_proto::Priority::Low,
                source: Source::Heartbeat,
                job: None,
                items: Vec::new(),
            };
            let post = || async {
                let post = Post::proactive(text, None, said);
                d.hub.call_async(post).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())
            };
            let sent = match &d.policy {
                Some(policy) => {
                    match dispatch_through(policy, gate_nudge(target, reply.clone(), topic.clone()), post).await {
                        Gated::Delivered(to) => Ok(to),
                        Gated::Denied(v) => {
                            // The gate holding a reply back is the engine working, not a fault.
                            tracing::info!(%target, "heartbeat reply held back by the gate: {}", v.reason);
                            continue;
                        }
                        Gated::Failed(e) | Gated::Unavailable(e) => Err(e),
                    }
                }
                None => post().await,
            };
            match sent {
                Ok(to) => delivered_to.push(to),
                Err(e) => tracing::warn!(%target, "heartbeat reply not delivered: {e}"),
            }
        }
        HeartbeatOutcome::Ran { reply, delivered_to }
    }
}

/// A heartbeat message as the gate sees it.
fn gate_nudge(target: &str, content: String, topic: String) -> Nudge {
    Nudge {
        action: raven_proto::Action::Nudge,
        session_key: Some(target.to_owned()),
        content,
        priority: raven_proto::Priority::Low,
        topic: Some(topic),
        solicited: false,
    }
}

/// The loop re-reads the clock at least this often, so a resumed machine or a moved clock
/// is noticed without waiting out a whole interval.
const MAX_SLEEP: std::time::Duration = std::time::Duration::from_secs(60);

/// Clears the published next tick when the loop ends (or is aborted).
struct Published(WakeHandle);

impl Drop for Published {
    fn drop(&mut self) {
        self.0.set_next_tick(None);
    }
}

/// Ticks `handle` every `cfg.interval_s` (the first one an interval after the start) until
/// the returned handle is aborted. A wake ends the sleep early: a due one ticks at once,
/// unless user turns are in flight (then it is parked and the turn-complete callback
/// releases it). The regular tick is not held back by user turns: only a wake is parked.
/// Every tick, whatever fired it, restarts the interval. With `cfg.enabled == false` the
/// task ends at once.
pub fn spawn_heartbeat_loop(
    handle: Handle<HeartbeatService>,
    wake: WakeHandle,
    clock: SharedClock,
    cfg: HeartbeatConfig,
) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        if !cfg.enabled {
            return;
        }
        let interval = Duration::seconds(i64::from(u32::try_from(cfg.interval_s.max(1)).unwrap_or(u32::MAX)));
        let published = Published(wake.clone());
        let mut next_tick = clock.now() + interval;
        loop {
            published.0.set_next_tick(Some(next_tick));
            let now = clock.now();
            let cause = match wake.take_due(now, wake.user_busy()) {
                Some(reasons) => Some(format!("wake: {}", reasons.join(", "))),
                None => (now >= next_tick).then(|| "interval".to_owned()),
            };
            if let Some(cause) = cause {
                let ticked = match cause.starts_with("wake") {
                    true => handle.call_async(HeartbeatTick).await,
                    false => handle.call_async(IntervalTick).await,
                };
                match ticked {
                    Ok(outcome) => tracing::info!(%cause, ?outcome, "heartbeat tick"),
                    Err(e) => tracing::error!(%cause, "heartbeat tick failed: {e}"),
                }
                next_tick = clock.now() + interval;
                continue;
            }
            let deadline = wake.next_due().map_or(next_tick, |due| due.min(next_tick));
            let wait = (deadline - now).to_std().unwrap_or_default().min(MAX_SLEEP);
            tokio::select! {
                _ = actix_rt::time::sleep(wait) => {}
                _ = wake.woken() => {}
            }
        }
    })
}
