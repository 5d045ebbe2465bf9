//! The control socket's handler on a running engine: one small method per request, each
//! answering from the handles the engine shares with it.

use super::Engine;
use crate::agent::broker::QuestionBroker;
use crate::agent::{dispatch_inbound, Inbound};
use crate::clock::SharedClock;
use crate::cron::service::{CronService, NextCronFire};
use crate::delivery::hub::{DeliveryHubService, OutboxLevels as Levels, Post};
use crate::llm::breaker::Breaker;
use crate::sentinel::RunnerService;
use crate::spine::{Scheduler, TurnOutcome};
use crate::supervise::{render_prometheus, Handle, Metrics, OutboxLevels};
use futures_util::future::LocalBoxFuture;
use raven_proto::control::{ControlRequest, ControlResponse, Upcoming};
use std::rc::Rc;

/// The control socket's handler on a running engine.
pub struct EngineControl {
    pub metrics: Metrics,
    /// Verdicts recorded by other processes, counted before the metrics are read.
    pub others: Option<Rc<crate::journal::OthersVerdicts>>,
    pub scheduler: Scheduler,
    pub questions: Rc<QuestionBroker>,
    pub hub: Handle<DeliveryHubService>,
    pub runner: Handle<RunnerService>,
    pub cron: Option<Handle<CronService>>,
    pub heartbeat: Handle<crate::heartbeat::HeartbeatService>,
    pub wake: crate::heartbeat::WakeHandle,
    pub clock: SharedClock,
    pub next_tick: Rc<std::cell::Cell<Option<chrono::DateTime<chrono::Utc>>>>,
    /// The running config (`sentinel.enabled` follows config.toml).
    pub config: crate::config::LiveConfig,
    pub events: crate::ipc::EventBus,
    pub gateway: Option<crate::delivery::remote::GatewayLink>,
    /// The provider's breaker and the provider's name, for `raven status`.
    pub llm: Option<(Breaker, String)>,
}

impl EngineControl {
    /// Retries at once, in the background, what waits in the outbox for `channels`.
    fn retry_now(&self, channels: Vec<String>) {
        let hub = self.hub.clone();
        actix_rt::spawn(async move {
            if let Ok(Err(e)) = hub.call_async(crate::delivery::hub::Watching(channels)).await {
                tracing::warn!("the outbox could not be retried: {e}");
            }
        });
    }

    pub fn of(engine: &Engine) -> Self {
        EngineControl {
            metrics: engine.metrics.clone(),
            others: engine.others.clone(),
            scheduler: engine.scheduler.clone(),
            questions: engine.questions.clone(),
            hub: engine.hub.clone(),
            runner: engine.runner.clone(),
            cron: engine.cron.clone(),
            heartbeat: engine.heartbeat.clone(),
            wake: engine.wake.clone(),
            clock: engine.clock.clone(),
            next_tick: engine.next_tick.clone(),
            config: engine.config.clone(),
            events: engine.events.clone(),
            gateway: engine.gateway.clone(),
            llm: engine.breaker.clone().map(|b| (b, engine.provider_name.clone())),
        }
    }

    /// When each timer fires next.
    pub fn upcoming(&self) -> LocalBoxFuture<'static, Vec<Upcoming>> {
        let rfc = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(|t| t.to_rfc3339());
        let what = if self.config.get().sentinel.enabled {
            "sentinel tick"
        } else {
            "sentinel tick (off: sentinel.enabled = false)"
        };
        let tick = Upcoming { what: what.into(), at: rfc(self.next_tick.get()) };
        let config = self.config.get();
        let brief = (config.sentinel.enabled && config.brief.enabled).then(|| Upcoming {
            what: "morning brief (on a day with something to say)".into(),
            at: rfc(config.brief.next_after(self.clock.now(), config.general.timezone, &config.policy.quiet_hours)),
        });
        let (cron, heartbeat) = (self.cron.clone(), self.heartbeat.clone());
        Box::pin(async move {
            let mut out = vec![tick];
            out.extend(brief);
            if let Some(cron) = cron {
                out.push(Upcoming { what: "cron".into(), at: rfc(cron.call(NextCronFire).await.ok().flatten()) });
            }
            let next = heartbeat.call(crate::heartbeat::NextHeartbeat).await.ok().flatten();
            out.push(Upcoming { what: "heartbeat".into(), at: rfc(next) });
            out
        })
    }

    /// `raven status`: the actors' metrics and the timers.
    fn status(&self, pid: u32) -> LocalBoxFuture<'static, ControlResponse> {
        let (actors, upcoming) = (self.metrics.snapshot(), self.upcoming());
        let llm = self.llm.as_ref().map(|(breaker, name)| breaker.health(name));
        Box::pin(async move { ControlResponse::Status { pid, actors, upcoming: upcoming.await, llm } })
    }

    /// The metrics in the Prometheus text format, the outbox read when they are asked for.
    fn prometheus(&self) -> LocalBoxFuture<'static, ControlResponse> {
        let (metrics, hub) = (self.metrics.clone(), self.hub.clone());
        if let Some(others) = &self.others {
            others.count();
        }
        Box::pin(async move {
            let outbox = hub.call_async(Levels).await.ok().and_then(Result::ok);
            let levels = outbox.map(|o| OutboxLevels { depth: o.waiting, dead_letters: o.dead });
            ControlResponse::Metrics { text: render_prometheus(&metrics, levels) }
        })
    }

    /// `raven send`: one message through the hub.
    fn send(&self, target: String, text: String) -> LocalBoxFuture<'static, ControlResponse> {
        let hub = self.hub.clone();
        Box::pin(async move { super::send(&hub, &target, &text).await })
    }

    /// `raven wake`: the heartbeat runs early.
    fn wake(&self, reason: String) -> ControlResponse {
        self.wake.request_wake_now(reason, self.clock.now());
        ControlResponse::Ack
    }

    /// The gateway reports what became of a delivery it hosted.
    fn delivered(&self, id: u64, error: Option<String>, transient: bool) -> ControlResponse {
        use crate::delivery::outlets::OutletError;
        let result = match error {
            None => Ok(()),
            Some(e) if transient => Err(OutletError::Transient(e)),
            Some(e) => Err(OutletError::Refused(e)),
        };
        if let Some(g) = &self.gateway {
            g.resolve(id, result);
        }
        ControlResponse::Ack
    }

    /// `raven tick`: one Sentinel tick now, with what it showed on the cli.
    fn tick(&self) -> LocalBoxFuture<'static, ControlResponse> {
        let runner = self.runner.clone();
        Box::pin(async move {
            match runner.call_async(crate::sentinel::Tick).await {
                Ok(out) => {
                    let to_cli = out
                        .result
                        .as_ref()
                        .is_some_and(|r| r.delivered && r.targets.iter().any(|t| t.starts_with("cli:")));
                    let cli_messages = match (to_cli, &out.decision.nudge_message) {
                        (true, Some(m)) => vec![m.clone()],
                        _ => Vec::new(),
                    };
                    let detail = out.describe();
                    ControlResponse::Ticked { route: out.route.to_string(), cli_messages, detail }
                }
                Err(e) => ControlResponse::Error { message: e.to_string() },
            }
        })
    }

    /// A user's message from a channel: its turn's reply, delivered through the channel's
    /// outlet too with `deliver`.
    fn inbound(&self, turn: raven_proto::TurnRequest, deliver: bool) -> LocalBoxFuture<'static, ControlResponse> {
        if turn.origin != raven_proto::Origin::User {
            let response = ControlResponse::Error { message: "only user messages come in from channels".into() };
            return Box::pin(async move { response });
        }
        let target = (turn.channel.clone(), turn.chat_id.clone(), turn.request_id.clone());
        let hub = self.hub.clone();
        let (how, reply) = dispatch_inbound(&self.scheduler, &self.questions, turn);
        Box::pin(async move {
            let response = reply_of(how, reply).await;
            if let (true, ControlResponse::Reply { text: Some(text) } | ControlResponse::Refused { text }) =
                (deliver, &response)
            {
                deliver_reply(&hub, target, text).await;
            }
            response
        })
    }
}

/// What the turn an inbound message started (if any) answered.
async fn reply_of(how: Inbound, reply: Option<tokio::sync::oneshot::Receiver<TurnOutcome>>) -> ControlResponse {
    match (how, reply) {
        (Inbound::Routed(crate::spine::Routed::Injected), _) | (Inbound::Answered, _) => {
            ControlResponse::Reply { text: None }
        }
        (_, Some(rx)) => match rx.await {
            Ok(TurnOutcome::Replied(text)) => ControlResponse::Reply { text: Some(text) },
            Ok(TurnOutcome::Refused(text)) => ControlResponse::Refused { text },
            Ok(TurnOutcome::Failed(e)) => ControlResponse::Error { message: e },
            Ok(TurnOutcome::Interrupted) | Err(_) => ControlResponse::Reply { text: None },
        },
        (_, None) => ControlResponse::Reply { text: None },
    }
}

/// The reply to an inbound message, out through its channel's outlet.
async fn deliver_reply(hub: &Handle<DeliveryHubService>, target: (String, String, String), text: &str) {
    let (channel, chat_id, id) = target;
    let out = raven_proto::OutboundText {
        delivery_id: format!("reply-{id}"),
        channel,
        chat_id,
        content: text.to_owned(),
        extras: Default::default(),
    };
    if let Ok(Err(e)) = hub.call_async(Post::text(out)).await {
        tracing::warn!("reply not delivered through the outlet: {e}");
    }
}

impl crate::ipc::ControlHandler for EngineControl {
    /// A REPL attaches: it sees the terminal's messages from now on, and what waited for
    /// someone to watch is retried at once.
    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<String>> {
        let events = self.events.subscribe(crate::ipc::EVENT_QUEUE);
        self.retry_now(vec!["cli".into()]);
        Some(events)
    }

    /// A gateway connects: what waited for its channels goes now, not at its next try (up to
    /// an hour on).
    fn host_outlets(
        &self,
        channels: &[String],
    ) -> Option<tokio::sync::mpsc::Receiver<(u64, raven_proto::OutboundText)>> {
        tracing::info!("the gateway hosts {channels:?}");
        let attached = self.gateway.as_ref().map(|g| g.attach());
        if attached.is_some() {
            self.retry_now(channels.to_vec());
        }
        attached
    }

    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        let pid = std::process::id();
        let response = match req {
            ControlRequest::Ping => ControlResponse::Pong { pid },
            ControlRequest::Status => return self.status(pid),
            ControlRequest::Metrics => return self.prometheus(),
            ControlRequest::Send { target, text } => return self.send(target, text),
            ControlRequest::Wake { reason } => self.wake(reason),
            ControlRequest::Delivered { id, error, transient } => self.delivered(id, error, transient),
            // The server answers these itself, through `subscribe` and `host_outlets`.
            ControlRequest::Subscribe | ControlRequest::HostOutlets { .. } => {
                ControlResponse::Error { message: "asked on a connection, not of the engine".into() }
            }
            ControlRequest::Tick => return self.tick(),
            ControlRequest::Inbound { turn, deliver } => return self.inbound(turn, deliver),
        };
        Box::pin(async move { response })
    }
}
