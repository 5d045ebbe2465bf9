//! Wiring: every actor of the engine, built from a data dir and its config, each supervised
//! and metered, sharing one clock and one state store.

use crate::agent::broker::{AskUserTool, QuestionBroker};
use crate::agent::session::SessionStore;
use crate::agent::tools::{CronTool, FeedbackTool, Tool};
use crate::agent::{Agent, AgentLoop, AgentSubagent};
use crate::clock::SharedClock;
use crate::config::RavenConfig;
use crate::context::attention::{producers, AttentionUpdater};
use crate::context::behaviors_extractor::BehaviorsExtractor;
use crate::context::preferences::ProactivityPreferencesReader;
use crate::context::{AssemblerService, AttentionChanged, ContextAssembler};
use crate::cron::claims::{ChannelFilter, Claimer, ResetStrikes};
use crate::cron::fire::CronTurns;
use crate::cron::service::{spawn_cron_loop, CronService, NextCronFire};
use crate::cron::store::JobsStore;
use crate::cron::tool::JobsCron;
use crate::data_dir::DataDir;
use crate::discovery::{
    ActionExecutor, DecisionConsumer, DecisionRouter, DiscoveryRun, PendingDecisionStore, TaskDiscoverer,
};
use crate::executor::conversation::Conversations;
use crate::executor::defer::{DeferManager, DeferService};
use crate::executor::dispatcher::NudgeDispatcher;
use crate::executor::hub::{DeliveryHubService, Post, RegisterOutlet, RetryOutbox};
use crate::executor::injector::{InjectorService, NudgeInjector};
use crate::executor::outlets::{CliOutlet, JsonlOutlet, Outlet, WebhookOutlet};
use crate::executor::spawn::ProactiveSpawn;
use crate::executor::targets::Channels;
use crate::executor::Executors;
use crate::feedback::hook::FeedbackReplies;
use crate::feedback::NudgeFeedbackTracker;
use crate::planner::openai::OpenAiProvider;
use crate::planner::provider::SharedProvider;
use crate::planner::rules::RulesProvider;
use crate::planner::{PlannerService, ProactivePlanner};
use crate::policy::{NudgePolicy, NudgePolicyService};
use crate::sentinel::triggers::TriggerStore;
use crate::sentinel::{spawn_defer_loop, spawn_tick_loop, Router, RunnerDeps, RunnerService, SentinelRunner};
use crate::spine::{OriginPools, Scheduler};
use crate::store::owners::{self, Owner};
use crate::supervise::{start, Handle, Metrics, RestartPolicy};
use crate::watch::{watch_file, FileWatch};
use futures_util::future::LocalBoxFuture;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

pub mod sim;

pub struct Engine {
    pub metrics: Metrics,
    pub policy: Handle<NudgePolicyService>,
    pub planner: Handle<PlannerService>,
    pub assembler: Handle<AssemblerService>,
    pub hub: Handle<DeliveryHubService>,
    pub injector: Handle<InjectorService>,
    pub defer: Handle<DeferService>,
    pub runner: Handle<RunnerService>,
    /// The heartbeat and the wake that ends its sleep early.
    pub heartbeat: Handle<crate::heartbeat::HeartbeatService>,
    pub wake: crate::heartbeat::WakeHandle,
    /// The cron timer (`None` with `cron.enabled = false`).
    pub cron: Option<Handle<CronService>>,
    /// Ends the cron timer's sleep (the jobs.json watcher rings it).
    pub jobs_changed: Arc<tokio::sync::Notify>,
    /// When the Sentinel ticks next, kept by its loop.
    pub next_tick: Rc<std::cell::Cell<Option<chrono::DateTime<chrono::Utc>>>>,
    /// `sentinel.enabled`: whether the tick loop runs at all.
    pub sentinel_enabled: bool,
    /// Where user and proactive turns reach the agent.
    pub scheduler: Scheduler,
    pub questions: Rc<QuestionBroker>,
    pub provider_name: String,
    pub clock: SharedClock,
    /// What the `cli` outlet delivered, for the attached REPLs.
    pub events: crate::ipc::EventBus,
    /// The gateway's end of the outlets it hosts (`None` when it hosts none).
    pub gateway: Option<crate::executor::remote::GatewayLink>,
    /// Kept alive: dropping them stops the attention.md and jobs.json watches.
    _watches: Vec<FileWatch>,
}

/// What a caller (a test, `raven simulate`) puts in place of the configured parts.
#[derive(Default)]
pub struct Overrides {
    pub provider: Option<SharedProvider>,
    /// Replaces the executors behind the runner.
    pub router: Option<Rc<dyn Router>>,
    /// Registered after the configured outlets (one per channel: these win).
    pub outlets: Vec<Arc<dyn Outlet>>,
    /// Channels whose outlets the gateway process hosts (`raven up` with the gateway on):
    /// the hub hands their deliveries to it over the control socket.
    pub remote_channels: Vec<String>,
    /// The channels whose cron jobs this engine may fire (`None`: all). An embedded REPL
    /// passes `cli`, so it never steals a job meant for a real channel.
    pub cron_channels: Option<Vec<String>>,
}

/// The configured provider: OpenAI-compatible when `llm.base_url` is set, else the embedded
/// rules.
pub fn provider(config: &RavenConfig) -> Result<SharedProvider, String> {
    let llm = &config.llm;
    if llm.base_url.trim().is_empty() {
        return Ok(Rc::new(RulesProvider::new(config.general.timezone).with_order(config.general.date_order)));
    }
    let key = std::env::var(&llm.api_key_env).ok();
    OpenAiProvider::new(&llm.base_url, &llm.model, key, Duration::from_secs(llm.timeout_s))
        .map(|p| Rc::new(p) as SharedProvider)
        .map_err(|e| format!("llm provider: {e}"))
}

/// The outlets `[delivery]` configures: `cli` always, `jsonl` and `webhook` when set.
pub fn configured_outlets(
    dir: &DataDir,
    config: &RavenConfig,
    events: &crate::ipc::EventBus,
) -> Result<Vec<Arc<dyn Outlet>>, String> {
    let d = &config.delivery;
    let mut out: Vec<Arc<dyn Outlet>> = vec![Arc::new(CliOutlet::stdout().publishing(events.clone()))];
    if !d.jsonl_path.trim().is_empty() {
        out.push(Arc::new(JsonlOutlet::new(dir.root().join(&d.jsonl_path))));
    }
    if !d.webhook_url.trim().is_empty() {
        let secret = std::env::var(&d.webhook_secret_env).ok().filter(|s| !s.is_empty());
        let w = WebhookOutlet::new(
            &d.webhook_url,
            secret,
            d.webhook_attempts,
            Duration::from_millis(d.webhook_backoff_ms),
            Duration::from_secs(d.webhook_timeout_s),
        )?;
        out.push(Arc::new(w));
    }
    Ok(out)
}

/// The channels of the configured outlets that face the outside (all but `cli`): what the
/// gateway process hosts when it runs.
pub fn hosted_channels(config: &RavenConfig) -> Vec<String> {
    let d = &config.delivery;
    let mut out = Vec::new();
    if !d.jsonl_path.trim().is_empty() {
        out.push("jsonl".to_owned());
    }
    if !d.webhook_url.trim().is_empty() {
        out.push("webhook".to_owned());
    }
    out
}

impl Engine {
    /// The long-running loops: the Sentinel tick (only when `sentinel.enabled`), the cron
    /// timer, the heartbeat, the DeferManager poll, the trigger drain and the outbox retry,
    /// each supervised (started again if it ends or panics; `loop:<name>` in the metrics).
    /// Abort the handles to stop them.
    pub fn spawn_loops(&self, config: &RavenConfig) -> Vec<actix_rt::task::JoinHandle<()>> {
        use crate::supervise::loops::supervised_loop;
        let m = &self.metrics;
        let mut loops = Vec::new();
        if config.sentinel.enabled {
            let every = Duration::from_secs(config.sentinel.interval_s);
            let (runner, clock, next) = (self.runner.clone(), self.clock.clone(), self.next_tick.clone());
            loops.push(supervised_loop("tick", m, move || {
                spawn_tick_loop(runner.clone(), every, clock.clone(), next.clone())
            }));
        }
        if let Some(cron) = &self.cron {
            let cap = Duration::from_secs(config.cron.max_sleep_s.max(1));
            let (cron, clock, changed) = (cron.clone(), self.clock.clone(), self.jobs_changed.clone());
            loops.push(supervised_loop("cron", m, move || {
                spawn_cron_loop(cron.clone(), clock.clone(), changed.clone(), cap)
            }));
        }
        if config.heartbeat.enabled {
            let (h, wake, clock, cfg) =
                (self.heartbeat.clone(), self.wake.clone(), self.clock.clone(), config.heartbeat.clone());
            loops.push(supervised_loop("heartbeat", m, move || {
                crate::heartbeat::spawn_heartbeat_loop(h.clone(), wake.clone(), clock.clone(), cfg.clone())
            }));
        }
        let (runner, every) = (self.runner.clone(), Duration::from_secs(config.executor.defer_poll_s.max(1)));
        loops.push(supervised_loop("defer", m, move || spawn_defer_loop(runner.clone(), every)));
        let (runner, every) = (self.runner.clone(), Duration::from_secs(config.sentinel.trigger_poll_s.max(1)));
        loops.push(supervised_loop("triggers", m, move || crate::sentinel::spawn_trigger_loop(runner.clone(), every)));
        let hub = self.hub.clone();
        let every = Duration::from_secs(config.delivery.outbox_backoff_s.max(1) as u64);
        loops.push(supervised_loop("outbox", m, move || {
            let hub = hub.clone();
            actix_rt::spawn(async move {
                let mut interval = actix_rt::time::interval(every);
                loop {
                    interval.tick().await;
                    if let Ok(Err(e)) = hub.call_async(RetryOutbox).await {
                        tracing::error!("outbox retry failed: {e}");
                    }
                }
            })
        }));
        loops
    }

    /// Starts the actors on the current actix arbiter, as configured.
    pub fn start(dir: &DataDir, config: &RavenConfig, clock: SharedClock) -> Result<Engine, String> {
        Engine::start_with(dir, config, clock, Overrides::default())
    }

    pub fn start_with(dir: &DataDir, config: &RavenConfig, clock: SharedClock, o: Overrides) -> Result<Engine, String> {
        dir.ensure().map_err(|e| format!("data dir {}: {e}", dir.root().display()))?;
        let tz = config.general.timezone;
        let metrics = Metrics::default();
        // Producers (cron and subagent completions, `raven wake`) wake the heartbeat early.
        let wake = crate::heartbeat::WakeHandle::from_config(&config.heartbeat);
        let restart = |actor: &str| RestartPolicy::from(&config.supervise).with_fault_from_env(actor);
        // One state file per owner: the ledger, the inject queues, the defer heap, the outbox.
        let state = |owner| owners::open(dir, owner).map_err(|e| e.to_string());
        let ledger = Arc::new(state(Owner::Policy)?);
        let policy = start(
            NudgePolicyService::new(NudgePolicy::new(config.policy.clone(), tz), Some(ledger), clock.clone()),
            &metrics,
            restart("NudgePolicy"),
        );
        let provider = match o.provider {
            Some(p) => p,
            None => provider(config)?,
        };
        let provider_name = provider.name().to_owned();
        let planner = start(PlannerService::new(ProactivePlanner::new(provider.clone())), &metrics, restart("Planner"));
        let assembler = start(
            AssemblerService::new(
                ContextAssembler::new(dir, config.context.clone())
                    .with_zone(tz)
                    .with_calendar(crate::context::calendar::calendar_hook(dir.root(), &config.context.calendar, tz)),
            ),
            &metrics,
            restart("ContextAssembler"),
        );
        let watched = assembler.clone();
        let mut watches = Vec::new();
        match watch_file(&dir.attention(), move || watched.do_send(AttentionChanged)) {
            Ok(w) => watches.push(w),
            // The assembler still re-reads after the runner's own writes.
            Err(e) => tracing::warn!("attention.md is not watched, a hand edit is seen after the next update: {e}"),
        }
        let backoff = chrono::Duration::seconds(config.delivery.outbox_backoff_s);
        // One of each per process: every user of feedback.jsonl and jobs.json shares it (a
        // JobsStore's clones share its cache).
        let tracker = Rc::new(NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), tz));
        let jobs = JobsStore::new(dir.jobs());
        let conversations = Conversations::new(SessionStore::new(dir.sessions()), tracker.clone());
        let hub = start(
            DeliveryHubService::new(Arc::new(state(Owner::Outbox)?), clock.clone(), backoff, Some(policy.clone()))
                .with_conversations(conversations.clone())
                .with_channels(Channels::of(config))
                .with_limits(chrono::Duration::hours(config.delivery.outbox_ttl_nudge_h), config.delivery.outbox_max),
            &metrics,
            restart("DeliveryHub"),
        );
        let events = crate::ipc::EventBus::default();
        for outlet in configured_outlets(dir, config, &events)?.into_iter().chain(o.outlets) {
            hub.do_send(RegisterOutlet(outlet));
        }
        let gateway = crate::executor::remote::GatewayLink::default();
        let d = &config.delivery;
        let timeout = Duration::from_secs(d.webhook_timeout_s * (d.webhook_attempts as u64 + 1) + 5);
        for channel in &o.remote_channels {
            let remote =
                crate::executor::remote::RemoteOutlet { channel: channel.clone(), link: gateway.clone(), timeout };
            hub.do_send(RegisterOutlet(Arc::new(remote)));
        }
        let x = &config.executor;
        let injector = start(
            InjectorService::new(
                NudgeInjector::new(
                    Arc::new(state(Owner::Injector)?),
                    chrono::Duration::minutes(x.inject_ttl_minutes),
                    x.inject_cap,
                ),
                policy.clone(),
                clock.clone(),
            ),
            &metrics,
            restart("NudgeInjector"),
        );
        let defer = start(
            DeferService::new(DeferManager::in_data_dir(dir, x).map_err(|e| e.to_string())?, clock.clone()),
            &metrics,
            restart("DeferManager"),
        );
        let dispatcher = NudgeDispatcher::new(hub.clone(), config.delivery.default_targets.clone());
        let questions = hub.clone();
        let broker = Rc::new(QuestionBroker::new(
            Duration::from_secs(config.agent.ask_user_timeout_s),
            // On a channel the question goes out as text; the next inbound message answers it.
            Box::new(move |conversation, q| {
                let (channel, chat_id) = raven_proto::split_target(conversation);
                let text =
                    raven_proto::OutboundText::proactive(format!("ask-{}", q.batch), &channel, &chat_id, q.render());
                let hub = questions.clone();
                actix_rt::spawn(async move {
                    let _ = hub.call_async(Post::text(text)).await;
                });
            }),
        ));
        let tools: Vec<Rc<dyn Tool>> = vec![
            Rc::new(FeedbackTool { tracker: tracker.clone() }),
            Rc::new(AskUserTool { broker: broker.clone() }),
            Rc::new(CronTool {
                jobs: Rc::new(JobsCron {
                    store: jobs.clone(),
                    tz,
                    order: config.general.date_order,
                    channels: Channels::of(config),
                }),
            }),
        ];
        // A menu pick is answered before the LLM is called (spec §12).
        let menus = || PendingDecisionStore::new(dir.sentinel_dir().join("pending_decisions.json"));
        let spawn_late = Rc::new(std::cell::OnceCell::new());
        let consumer = DecisionConsumer {
            router: DecisionRouter {
                store: menus(),
                // The rules provider cannot classify free text: only numbers and /pick count.
                classifier: (provider.name() != "rules").then(|| provider.clone()),
                threshold: config.discovery.classifier_threshold,
            },
            executor: ActionExecutor {
                policy: policy.clone(),
                injector: injector.clone(),
                tools: tools.clone(),
                spawn: spawn_late.clone(),
                clock: clock.clone(),
            },
            clock: clock.clone(),
        };
        let agent = Rc::new(AgentLoop {
            provider: provider.clone(),
            tools,
            sessions: SessionStore::new(dir.sessions()),
            injector: Some(injector.clone()),
            inbound_hooks: vec![
                Rc::new(ResetStrikes(jobs.clone())),
                Rc::new(consumer),
                Rc::new(FeedbackReplies { tracker: tracker.clone(), jobs: jobs.clone(), tz, clock: clock.clone() }),
            ],
            clock: clock.clone(),
            max_iterations: config.agent.max_iterations,
            conversations: Some(conversations.clone()),
            feedback: Some(tracker.clone()),
            // Kept at least as long as a routine is remembered.
            history: config.context.history_enabled.then(|| {
                let keep_days = config.context.routine_forget_days.max(30);
                let writer = crate::context::routines::HistoryWriter::new(dir.history(), keep_days);
                Rc::new(crate::context::routines::HistoryHook { writer, tz }) as Rc<dyn crate::agent::HistorySink>
            }),
        });
        let scheduler = Scheduler::new(
            Rc::new(Agent(agent.clone())),
            OriginPools::new(config.agent.user_pool, config.agent.system_pool),
        )
        .metered(&metrics, "Spine");
        let spawn = ProactiveSpawn::new(
            policy.clone(),
            Rc::new(WakingSubagent {
                inner: AgentSubagent::new(scheduler.clone(), clock.clone()),
                wake: wake.clone(),
                clock: clock.clone(),
            }),
            dispatcher.clone(),
        );
        let _ = spawn_late.set(spawn.clone());
        let router: Rc<dyn Router> = match o.router {
            Some(r) => r,
            None => Rc::new(Executors {
                dispatcher: dispatcher.clone(),
                injector: injector.clone(),
                defer: defer.clone(),
                spawn,
            }),
        };
        let discovery_target = match config.discovery.target.trim() {
            "" => config.delivery.default_targets.first().cloned().unwrap_or_else(|| "cli:local".into()),
            t => t.to_owned(),
        };
        let discoverer = TaskDiscoverer {
            menus: Rc::new(menus()),
            guard: state(Owner::Discovery)?,
            provider: provider.clone(),
            policy: policy.clone(),
            dispatcher: dispatcher.clone(),
            memory_md: dir.memory(),
            history_md: dir.history(),
            heartbeat_md: dir.heartbeat(),
            tz,
            order: config.general.date_order,
            cfg: config.discovery.clone(),
            target: discovery_target,
            held: Default::default(),
            backoff: crate::supervise::backoff::LoopBackoff::new("task discovery"),
        };
        let runner = SentinelRunner::new(RunnerDeps {
            assembler: assembler.clone(),
            planner: planner.clone(),
            policy: policy.clone(),
            router,
            clock: clock.clone(),
            tz,
            order: config.general.date_order,
            tracker: tracker.clone(),
            attention: Some(AttentionUpdater::new(dir.attention(), producers::defaults())),
            cfg: config.sentinel.clone(),
            discovery: config
                .discovery
                .enabled
                .then(|| Box::new(DiscoveryRun(discoverer)) as Box<dyn crate::sentinel::DiscoveryHook>),
            daily_analysis: config.context.daily_analysis.then(|| dir.user_memory().join("daily_analysis.json")),
            quiet: std::iter::once(config.policy.quiet_hours).chain(config.policy.extra_quiet_hours.clone()).collect(),
        });
        let mut runner = runner.with_preferences(ProactivityPreferencesReader::for_data_dir(dir));
        // The extractor needs a model: with the rules provider it would only fail each tick.
        if config.context.behaviors.enabled && provider.name() != "rules" {
            let x = BehaviorsExtractor::new(
                dir.sessions(),
                dir.behaviors(),
                provider.clone(),
                config.context.behaviors.clone(),
            )
            .with_timezone(tz);
            runner = runner.with_behaviors(x);
        } else if config.context.behaviors.enabled {
            tracing::warn!("context.behaviors is on but no LLM is configured: behaviors.md is not extracted");
        }
        let runner = RunnerService::new(runner).with_triggers(TriggerStore::new(dir.triggers()));
        let runner = start(runner, &metrics, restart("SentinelRunner"));
        let heartbeat = start(
            crate::heartbeat::HeartbeatService::new(crate::heartbeat::HeartbeatDeps {
                provider: provider.clone(),
                heartbeat_md: dir.heartbeat(),
                scheduler: scheduler.clone(),
                hub: hub.clone(),
                targets: config.delivery.default_targets.clone(),
                clock: clock.clone(),
                cfg: config.heartbeat.clone(),
                wake: wake.clone(),
                policy: Some(policy.clone()),
            }),
            &metrics,
            restart("Heartbeat"),
        );
        let jobs_changed = Arc::new(tokio::sync::Notify::new());
        let cron = config.cron.enabled.then(|| {
            let turns = CronTurns {
                scheduler: scheduler.clone(),
                hub: hub.clone(),
                policy: policy.clone(),
                sessions: SessionStore::new(dir.sessions()),
                forward_channels: config.cron.forward_channels.clone(),
                clock: clock.clone(),
                // A cron completion is a reason to look at HEARTBEAT.md early.
                on_fired: Some({
                    let (wake, clock) = (wake.clone(), clock.clone());
                    Rc::new(move |id: &str| wake.request_wake_now(format!("cron:{id} done"), clock.now()))
                }),
            };
            let claimer = Claimer {
                pid: std::process::id(),
                ttl: chrono::Duration::seconds(config.cron.claim_ttl_s as i64),
                filter: ChannelFilter(o.cron_channels),
                strike_limit: config.cron.strike_limit.max(1),
            };
            let service = CronService::new(jobs.clone(), claimer, Rc::new(turns), clock.clone());
            start(service, &metrics, restart("Cron"))
        });
        if cron.is_some() {
            let ring = jobs_changed.clone();
            match watch_file(&dir.jobs(), move || ring.notify_one()) {
                Ok(w) => watches.push(w),
                Err(e) => {
                    tracing::warn!("jobs.json is not watched, a peer's edit is seen within cron.max_sleep_s: {e}")
                }
            }
        }
        Ok(Engine {
            metrics,
            policy,
            planner,
            assembler,
            hub,
            injector,
            defer,
            runner,
            scheduler,
            questions: broker,
            provider_name,
            cron,
            heartbeat,
            wake,
            jobs_changed,
            next_tick: Default::default(),
            sentinel_enabled: config.sentinel.enabled,
            events,
            gateway: (!o.remote_channels.is_empty()).then_some(gateway),
            clock,
            _watches: watches,
        })
    }
}

#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod tests;

/// `raven send`: one message through the hub, and what became of it.
pub async fn send(hub: &Handle<DeliveryHubService>, target: &str, text: &str) -> raven_proto::control::ControlResponse {
    use raven_proto::control::ControlResponse;
    let (channel, chat_id) = raven_proto::split_target(target);
    let id = format!("send-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros());
    let out = raven_proto::OutboundText {
        delivery_id: id,
        channel,
        chat_id,
        content: text.to_owned(),
        extras: Default::default(),
    };
    match hub.call_async(Post::text(out)).await {
        Ok(Ok(())) => ControlResponse::Sent { delivered: true, detail: format!("delivered to {target}") },
        Ok(Err(e)) => ControlResponse::Sent { delivered: false, detail: e.to_string() },
        Err(e) => ControlResponse::Error { message: e.to_string() },
    }
}

/// A subagent whose completion wakes the heartbeat (spec §11's producers).
struct WakingSubagent {
    inner: AgentSubagent,
    wake: crate::heartbeat::WakeHandle,
    clock: SharedClock,
}

impl crate::executor::spawn::SubagentManager for WakingSubagent {
    fn spawn<'a>(
        &'a self,
        task: &'a str,
        channel: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let result = self.inner.spawn(task, channel, chat_id).await;
            self.wake.request_wake_now(format!("subagent for {channel}:{chat_id} done"), self.clock.now());
            result
        })
    }
}

/// The control socket's handler on a running engine.
pub struct EngineControl {
    pub metrics: Metrics,
    pub scheduler: Scheduler,
    pub questions: Rc<QuestionBroker>,
    pub hub: Handle<DeliveryHubService>,
    pub runner: Handle<RunnerService>,
    pub cron: Option<Handle<CronService>>,
    pub heartbeat: Handle<crate::heartbeat::HeartbeatService>,
    pub wake: crate::heartbeat::WakeHandle,
    pub clock: SharedClock,
    pub next_tick: Rc<std::cell::Cell<Option<chrono::DateTime<chrono::Utc>>>>,
    pub sentinel_enabled: bool,
    pub events: crate::ipc::EventBus,
    pub gateway: Option<crate::executor::remote::GatewayLink>,
}

impl EngineControl {
    pub fn of(engine: &Engine) -> Self {
        EngineControl {
            metrics: engine.metrics.clone(),
            scheduler: engine.scheduler.clone(),
            questions: engine.questions.clone(),
            hub: engine.hub.clone(),
            runner: engine.runner.clone(),
            cron: engine.cron.clone(),
            heartbeat: engine.heartbeat.clone(),
            wake: engine.wake.clone(),
            clock: engine.clock.clone(),
            next_tick: engine.next_tick.clone(),
            sentinel_enabled: engine.sentinel_enabled,
            events: engine.events.clone(),
            gateway: engine.gateway.clone(),
        }
    }

    /// When each timer fires next.
    pub fn upcoming(&self) -> LocalBoxFuture<'static, Vec<raven_proto::control::Upcoming>> {
        use raven_proto::control::Upcoming;
        let rfc = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(|t| t.to_rfc3339());
        let what =
            if self.sentinel_enabled { "sentinel tick" } else { "sentinel tick (off: sentinel.enabled = false)" };
        let tick = Upcoming { what: what.into(), at: rfc(self.next_tick.get()) };
        let (cron, heartbeat) = (self.cron.clone(), self.heartbeat.clone());
        Box::pin(async move {
            let mut out = vec![tick];
            if let Some(cron) = cron {
                out.push(Upcoming { what: "cron".into(), at: rfc(cron.call(NextCronFire).await.ok().flatten()) });
            }
            let next = heartbeat.call(crate::heartbeat::NextHeartbeat).await.ok().flatten();
            out.push(Upcoming { what: "heartbeat".into(), at: rfc(next) });
            out
        })
    }
}

impl crate::ipc::ControlHandler for EngineControl {
    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<String>> {
        Some(self.events.subscribe(crate::ipc::EVENT_QUEUE))
    }

    fn host_outlets(
        &self,
        channels: &[String],
    ) -> Option<tokio::sync::mpsc::Receiver<(u64, raven_proto::OutboundText)>> {
        tracing::info!("the gateway hosts {channels:?}");
        self.gateway.as_ref().map(|g| g.attach())
    }

    fn handle(
        &self,
        req: raven_proto::control::ControlRequest,
    ) -> futures_util::future::LocalBoxFuture<'static, raven_proto::control::ControlResponse> {
        use crate::agent::{dispatch_inbound, Inbound};
        use crate::spine::TurnOutcome;
        use raven_proto::control::{ControlRequest, ControlResponse};
        let pid = std::process::id();
        let response = match req {
            ControlRequest::Ping => ControlResponse::Pong { pid },
            ControlRequest::Status => {
                let (actors, upcoming) = (self.metrics.snapshot(), self.upcoming());
                return Box::pin(async move { ControlResponse::Status { pid, actors, upcoming: upcoming.await } });
            }
            ControlRequest::Metrics => {
                ControlResponse::Metrics { text: crate::supervise::render_prometheus(&self.metrics.snapshot()) }
            }
            ControlRequest::Send { target, text } => {
                let hub = self.hub.clone();
                return Box::pin(async move { send(&hub, &target, &text).await });
            }
            ControlRequest::Wake { reason } => {
                self.wake.request_wake_now(reason, self.clock.now());
                ControlResponse::Ack
            }
            ControlRequest::Delivered { id, error, transient } => {
                use crate::executor::outlets::OutletError;
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
            // The server answers these itself, through `subscribe` and `host_outlets`.
            ControlRequest::Subscribe | ControlRequest::HostOutlets { .. } => {
                ControlResponse::Error { message: "asked on a connection, not of the engine".into() }
            }
            ControlRequest::Tick => {
                let runner = self.runner.clone();
                return Box::pin(async move {
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
                            ControlResponse::Ticked { route: out.route, cli_messages }
                        }
                        Err(e) => ControlResponse::Error { message: e.to_string() },
                    }
                });
            }
            ControlRequest::Inbound { turn, deliver } => {
                if turn.origin != raven_proto::Origin::User {
                    ControlResponse::Error { message: "only user messages come in from channels".into() }
                } else {
                    let target = (turn.channel.clone(), turn.chat_id.clone(), turn.request_id.clone());
                    let hub = self.hub.clone();
                    let (how, reply) = dispatch_inbound(&self.scheduler, &self.questions, turn);
                    return Box::pin(async move {
                        let response = match (how, reply) {
                            (Inbound::Routed(crate::spine::Routed::Injected), _) | (Inbound::Answered, _) => {
                                ControlResponse::Reply { text: None }
                            }
                            (_, Some(rx)) => match rx.await {
                                Ok(TurnOutcome::Replied(text)) => ControlResponse::Reply { text: Some(text) },
                                Ok(TurnOutcome::Failed(e)) => ControlResponse::Error { message: e },
                                Ok(TurnOutcome::Interrupted) | Err(_) => ControlResponse::Reply { text: None },
                            },
                            (_, None) => ControlResponse::Reply { text: None },
                        };
                        if let (true, ControlResponse::Reply { text: Some(text) }) = (deliver, &response) {
                            let (channel, chat_id, id) = target;
                            let out = raven_proto::OutboundText {
                                delivery_id: format!("reply-{id}"),
                                channel,
                                chat_id,
                                content: text.clone(),
                                extras: Default::default(),
                            };
                            if let Ok(Err(e)) = hub.call_async(Post::text(out)).await {
                                tracing::warn!("reply not delivered through the outlet: {e}");
                            }
                        }
                        response
                    });
                }
            }
        };
        Box::pin(async move { response })
    }
}
