//! Wiring: every actor of the engine, built from a data dir and its config, each supervised
//! and metered, sharing one clock and one state store.

use crate::agent::broker::QuestionBroker;
use crate::agent::AgentSubagent;
use crate::clock::SharedClock;
use crate::config::RavenConfig;
use crate::context::AssemblerService;
use crate::cron::service::{spawn_cron_loop, CronService};
use crate::data_dir::DataDir;
use crate::delivery::hub::{DeliveryHubService, Post, RetryOutbox};
use crate::delivery::outlets::{CliOutlet, JsonlOutlet, Outlet, WebhookOutlet};
use crate::executor::defer::DeferService;
use crate::executor::injector::InjectorService;
use crate::llm::breaker::Breaker;
use crate::llm::openai::OpenAiProvider;
use crate::llm::params::ModelParams;
use crate::llm::provider::SharedProvider;
use crate::llm::retrying::Retrying;
use crate::planner::rules::RulesProvider;
use crate::planner::PlannerService;
use crate::policy::NudgePolicyService;
use crate::sentinel::{spawn_defer_loop, spawn_tick_loop, Router, RunnerService};
use crate::spine::Scheduler;
use crate::supervise::{Handle, Metrics};
use crate::watch::FileWatch;
use futures_util::future::LocalBoxFuture;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use wiring::Wiring;

// What the tests in `tests` and `loop_tests` find here through `super::*`.
#[cfg(test)]
use crate::{cron::store::JobsStore, feedback::NudgeFeedbackTracker};

mod control;
mod error;
mod follow;
mod wiring;

pub use control::EngineControl;
pub use error::StartError;

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
    /// Where user and proactive turns reach the agent.
    pub scheduler: Scheduler,
    /// The micro-agents still running (a one-shot tick waits for them before it exits).
    pub spawns: crate::executor::spawn::Spawns,
    pub questions: Rc<QuestionBroker>,
    pub provider_name: String,
    /// The provider's breaker (`None` for the embedded rules or a provider put in place).
    pub breaker: Option<Breaker>,
    pub clock: SharedClock,
    /// What the `cli` outlet delivered, for the attached REPLs.
    pub events: crate::ipc::EventBus,
    /// The gateway's end of the outlets it hosts (`None` when it hosts none).
    pub gateway: Option<crate::delivery::remote::GatewayLink>,
    /// The running config: the live keys follow config.toml once [`Engine::follow_config`]
    /// watches it.
    pub config: crate::config::LiveConfig,
    /// The outside-facing channels this process hosts itself.
    own_channels: Vec<String>,
    journal: crate::journal::Journal,
    /// The verdicts the gateway and `raven feedback` record, counted at each metrics read.
    pub others: Option<Rc<crate::journal::OthersVerdicts>>,
    /// Kept alive: dropping them stops the attention.md, jobs.json and config.toml watches.
    _watches: Vec<FileWatch>,
    /// The spawn the menus' actions run on. The engine holds it; the decision consumer only a
    /// weak reference, as the spawn leads back to it (through the agent): so dropping the
    /// engine drops its stores, and the state database is closed cleanly.
    _spawn: Rc<std::cell::OnceCell<crate::executor::spawn::ProactiveSpawn>>,
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

/// The configured provider: OpenAI-compatible when `llm.base_url` is set (with its retries
/// and its breaker, waiting on `clock`), else the embedded rules (no breaker).
pub fn provider(config: &RavenConfig, clock: SharedClock) -> Result<(SharedProvider, Option<Breaker>), StartError> {
    let llm = &config.llm;
    if llm.base_url.trim().is_empty() {
        return Ok((Rc::new(RulesProvider::of_config(config)), None));
    }
    let key = std::env::var(&llm.api_key_env).ok().filter(|k| !k.trim().is_empty());
    if key.is_none() {
        tracing::warn!(
            "`{}` (llm.api_key_env) is not set: {} is asked without an API key (a hosted API refuses that; a local server may need none)",
            llm.api_key_env,
            llm.base_url
        );
    }
    let openai = OpenAiProvider::new(&llm.base_url, &llm.model, key, Duration::from_secs(llm.timeout_s))
        .map_err(StartError::Provider)?
        .with_key_env(&llm.api_key_env)
        .with_max_reply_bytes(llm.max_reply_bytes)
        .with_max_prompt_tokens(llm.max_prompt_tokens)
        .with_params(ModelParams::from_config(llm));
    let breaker = Breaker::new(&llm.breaker, &llm.model, clock.clone());
    let seed = clock.now().timestamp_micros() as u64 ^ u64::from(std::process::id());
    let retrying = Retrying::new(Rc::new(openai), (&llm.retry).into(), breaker.clone(), clock, seed);
    Ok((Rc::new(retrying), Some(breaker)))
}

/// The embedded agent standing in for a configured model while it cannot be reached; `None`
/// when the embedded rules are the provider already.
pub fn stand_in(config: &RavenConfig, provider: &SharedProvider) -> Option<SharedProvider> {
    let rules = RulesProvider::of_config(config).standing_in();
    (provider.name() != "rules").then(|| Rc::new(rules) as SharedProvider)
}

/// The outlets `[delivery]` configures: `cli` always, `jsonl` and `webhook` when set.
pub fn configured_outlets(
    dir: &DataDir,
    config: &RavenConfig,
    events: &crate::ipc::EventBus,
) -> Result<Vec<Arc<dyn Outlet>>, StartError> {
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

/// The outside-facing channels the engine hosts itself: the configured ones, less those the
/// gateway hosts and those a caller put in place.
fn own_channels(config: &RavenConfig, o: &Overrides) -> Vec<String> {
    let overridden = |c: &String| o.outlets.iter().any(|out| out.channel() == c);
    hosted_channels(config).into_iter().filter(|c| !o.remote_channels.contains(c) && !overridden(c)).collect()
}

pub use crate::delivery::targets::hosted_channels;

/// How soon a Sentinel tick loop that is off sees `sentinel.enabled` turned on in config.toml.
const SENTINEL_OFF_POLL: Duration = Duration::from_secs(5);

impl Engine {
    /// The long-running loops: the Sentinel tick (ticking while `sentinel.enabled`), the cron
    /// timer, the heartbeat, the DeferManager poll, the trigger drain and the outbox retry,
    /// each supervised (started again if it ends or panics; `loop:<name>` in the metrics).
    /// Abort the handles to stop them.
    pub fn spawn_loops(&self, config: &RavenConfig) -> Vec<actix_rt::task::JoinHandle<()>> {
        use crate::supervise::loops::supervised_loop;
        let m = &self.metrics;
        let mut loops = Vec::new();
        {
            let (runner, clock, next) = (self.runner.clone(), self.clock.clone(), self.next_tick.clone());
            let live = self.config.clone();
            loops.push(supervised_loop("tick", m, move || {
                let live = live.clone();
                let every = move || {
                    let s = &live.get().sentinel;
                    s.enabled.then(|| Duration::from_secs(s.interval_s))
                };
                spawn_tick_loop(runner.clone(), every, SENTINEL_OFF_POLL, clock.clone(), next.clone())
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
    pub fn start(dir: &DataDir, config: &RavenConfig, clock: SharedClock) -> Result<Engine, StartError> {
        Engine::start_with(dir, config, clock, Overrides::default())
    }

    pub fn start_with(
        dir: &DataDir,
        config: &RavenConfig,
        clock: SharedClock,
        o: Overrides,
    ) -> Result<Engine, StartError> {
        dir.ensure().map_err(|source| StartError::DataDir { path: dir.root().to_owned(), source })?;
        crate::sessions::layout::migrate(&dir.sessions())
            .map_err(|source| StartError::Sessions { path: dir.sessions(), source })?;
        let w = Wiring::new(dir, config, clock);
        let own_channels = own_channels(config, &o);
        let policy = w.policy()?;
        let (provider, breaker) = match o.provider {
            Some(p) => (p, None),
            None => provider(config, w.clock.clone())?,
        };
        let provider = w.metrics.counters().metered(provider);
        let provider = w.accounted(provider)?;
        let provider_name = provider.name().to_owned();
        let planning = w.planning(&provider);
        let mut watches: Vec<FileWatch> = w.watch_attention(planning.assembler.clone()).into_iter().collect();
        let delivery = w.delivery(&policy, o.outlets, &o.remote_channels)?;
        let x = w.executors(&policy, &delivery.hub)?;
        let questions = w.question_broker(&delivery.hub);
        let tools = w.tools(&delivery, &questions);
        let (scheduler, spawn_late) = w.agent_and_scheduler(&provider, &policy, &x, &delivery, tools)?;
        let spawn = w.spawn(&policy, &scheduler, &x);
        let spawns = spawn.running();
        let _ = spawn_late.set(spawn.clone());
        let router = w.router(o.router, &x, spawn);
        let discoverer = w.discoverer(&provider, &policy, &x)?;
        let runner = w.runner(&planning, &policy, router, &delivery.tracker, discoverer, &provider)?;
        let heartbeat = w.heartbeat(&provider, &scheduler, &delivery.hub, &policy);
        let jobs_changed = Arc::new(tokio::sync::Notify::new());
        let cron = w.cron(&scheduler, &delivery, &policy, o.cron_channels);
        if cron.is_some() {
            watches.extend(w.watch_jobs(jobs_changed.clone()));
        }
        let others = crate::journal::OthersVerdicts::follow(&w.journal, w.metrics.counters()).map(Rc::new);
        Ok(Engine {
            others,
            metrics: w.metrics,
            policy,
            planner: planning.planner,
            assembler: planning.assembler,
            hub: delivery.hub,
            injector: x.injector,
            defer: x.defer,
            runner,
            scheduler,
            spawns,
            questions,
            provider_name,
            breaker,
            cron,
            heartbeat,
            wake: w.wake,
            jobs_changed,
            next_tick: Default::default(),
            events: delivery.events,
            gateway: delivery.gateway,
            clock: w.clock,
            config: w.live,
            own_channels,
            journal: w.journal,
            _watches: watches,
            _spawn: spawn_late,
        })
    }
}

#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod decision_cache_tests;
#[cfg(test)]
mod llm_tests;
#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod outage_tests;
#[cfg(test)]
mod strike_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod token_budget_tests;

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
        Ok(Ok(to)) => ControlResponse::Sent { delivered: true, detail: format!("delivered to {to}") },
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
    ) -> LocalBoxFuture<'a, Result<String, crate::executor::spawn::SpawnError>> {
        Box::pin(async move {
            let result = self.inner.spawn(task, channel, chat_id).await;
            self.wake.request_wake_now(format!("subagent for {channel}:{chat_id} done"), self.clock.now());
            result
        })
    }
}
