//! The steps of `Engine::start_with`, in the order it takes them: each builds one part of the
//! engine from the data dir and its config, starting its actors supervised and metered on the
//! shared clock.

use super::{configured_outlets, StartError, WakingSubagent};
use crate::agent::broker::{AskUserTool, QuestionBroker};
use crate::agent::inbound::feedback_hook::FeedbackReplies;
use crate::agent::knowledge::Knowledge;
use crate::agent::memory_tools::{ListJobsTool, ReadMemoryTool, RememberTool, SearchHistoryTool};
use crate::agent::notes::MemoryNotes;
use crate::agent::tools::{CronTool, FeedbackTool, Tool};
use crate::agent::{Agent, AgentLoop, AgentSubagent, HistorySink, MicroLimits};
use crate::config::{LiveConfig, RavenConfig};
use crate::context::attention::{producers, AttentionUpdater};
use crate::context::routines::{HistoryHook, HistoryWriter};
use crate::context::{behaviors_extractor::BehaviorsExtractor, preferences::ProactivityPreferencesReader};
use crate::context::{AssemblerService, AttentionChanged, ContextAssembler};
use crate::cron::claims::{ChannelFilter, Claimer};
use crate::cron::reply::JobReplies;
use crate::cron::{fire::CronTurns, service::CronService, store::JobsStore, tool::JobsCron};
use crate::delivery::hub::{DeliveryHubService, Post, RegisterOutlet};
use crate::delivery::remote::{GatewayLink, RemoteOutlet};
use crate::delivery::{conversation::Conversations, outlets::Outlet, targets::Channels};
use crate::discovery::{ActionExecutor, DecisionConsumer, DecisionRouter, DiscoveryRun, PendingDecisionStore};
use crate::executor::defer::{DeferManager, DeferService};
use crate::executor::dispatcher::DefaultTargets;
use crate::executor::injector::{InjectorService, NudgeInjector};
use crate::executor::{dispatcher::NudgeDispatcher, spawn::ProactiveSpawn, Executors};
use crate::feedback::NudgeFeedbackTracker;
use crate::heartbeat::{HeartbeatDeps, HeartbeatService, WakeHandle};
use crate::journal::Journal;
use crate::llm::provider::SharedProvider;
use crate::planner::{PlannerService, ProactivePlanner};
use crate::policy::{NudgePolicy, NudgePolicyService};
use crate::sentinel::{triggers::TriggerStore, DiscoveryHook, Router, RunnerDeps, RunnerService, SentinelRunner};
use crate::sessions::SessionStore;
use crate::spine::{OriginPools, Scheduler};
use crate::store::{owners, owners::Owner, JsonStateStore};
use crate::supervise::{start, Handle, Metrics, RestartPolicy};
use crate::watch::{watch_file, FileWatch};
use crate::{clock::SharedClock, data_dir::DataDir, discovery::TaskDiscoverer};
use std::{cell::OnceCell, rc::Rc, sync::Arc, time::Duration};

type Policy = Handle<NudgePolicyService>;
type Hub = Handle<DeliveryHubService>;

/// What every step shares: the data dir, its config, the clock, the metrics, the zone and the
/// heartbeat's wake.
pub(super) struct Wiring<'a> {
    dir: &'a DataDir,
    config: &'a RavenConfig,
    pub(super) clock: SharedClock,
    pub(super) metrics: Metrics,
    tz: chrono_tz::Tz,
    /// Producers (cron and subagent completions, `raven wake`) wake the heartbeat early.
    pub(super) wake: WakeHandle,
    /// The decision journal every part records to.
    pub(super) journal: Journal,
    /// The running config, read at each use by the parts that follow config.toml.
    pub(super) live: LiveConfig,
}

/// The planner and the context assembler.
pub(super) struct Planning {
    pub(super) planner: Handle<PlannerService>,
    pub(super) assembler: Handle<AssemblerService>,
}

/// What delivers: the hub with its outlets, and what shares feedback.jsonl and jobs.json.
pub(super) struct Delivery {
    pub(super) tracker: Rc<NudgeFeedbackTracker>,
    jobs: JobsStore,
    conversations: Conversations,
    pub(super) hub: Hub,
    pub(super) events: crate::ipc::EventBus,
    /// The gateway's end of the outlets it hosts (`None` when it hosts none).
    pub(super) gateway: Option<GatewayLink>,
}

/// What carries out a decision: the injector, the defer heap and the dispatcher.
pub(super) struct Execution {
    pub(super) injector: Handle<InjectorService>,
    pub(super) defer: Handle<DeferService>,
    dispatcher: NudgeDispatcher,
}

impl<'a> Wiring<'a> {
    pub(super) fn new(dir: &'a DataDir, config: &'a RavenConfig, clock: SharedClock) -> Self {
        let (metrics, tz) = (Metrics::default(), config.general.timezone);
        let (wake, journal) =
            (WakeHandle::from_config(&config.heartbeat), Journal::in_data_dir(dir).counting(metrics.counters()));
        let live = LiveConfig::new(config.clone());
        Wiring { dir, config, clock, metrics, tz, wake, journal, live }
    }

    fn restart(&self, actor: &str) -> RestartPolicy {
        RestartPolicy::from(&self.config.supervise).with_fault_from_env(actor)
    }

    /// One state file per owner: the ledger, the inject queues, the defer heap, the outbox.
    fn state(&self, owner: Owner) -> Result<JsonStateStore, StartError> {
        Ok(owners::open(self.dir, owner)?)
    }

    /// A menu pick is answered before the LLM is called (spec §12).
    fn menus(&self) -> PendingDecisionStore {
        PendingDecisionStore::new(self.dir.sentinel_dir().join("pending_decisions.json"))
    }

    pub(super) fn policy(&self) -> Result<Policy, StartError> {
        let ledger = Arc::new(self.state(Owner::Policy)?);
        let gate = NudgePolicy::new(self.config.policy.clone(), self.tz);
        let policy = NudgePolicyService::new(gate, Some(ledger), self.clock.clone()).with_journal(self.journal.clone());
        Ok(start(policy, &self.metrics, self.restart("NudgePolicy")))
    }

    /// The provider, its tokens counted per local day, metered and journaled, and the
    /// proactive roles held to `llm.daily_token_budget`; the embedded rules, which spend no
    /// tokens, as they are (nothing counted, nothing written).
    pub(super) fn accounted(&self, inner: SharedProvider) -> SharedProvider {
        if !inner.reads_prompt() {
            return inner;
        }
        Rc::new(crate::llm::accounted::Accounted {
            inner,
            ledger: crate::llm::daily_tokens::DailyTokens::new(self.dir.sentinel_dir().join("llm_tokens.json")),
            budget: self.config.llm.daily_token_budget,
            clock: self.clock.clone(),
            tz: self.tz,
            journal: self.journal.clone(),
        })
    }

    pub(super) fn planning(&self, provider: &SharedProvider) -> Planning {
        let (dir, config, tz) = (self.dir, self.config, self.tz);
        let planner =
            PlannerService::new(ProactivePlanner::new(provider.clone()).with_order(config.general.date_order));
        let planner = start(planner, &self.metrics, self.restart("Planner"));
        let calendar = crate::context::calendar::calendar_hook(dir.root(), &config.context.calendar, tz);
        let assembler = ContextAssembler::new(dir, config.context.clone()).with_zone(tz).with_calendar(calendar);
        let assembler = start(AssemblerService::new(assembler), &self.metrics, self.restart("ContextAssembler"));
        Planning { planner, assembler }
    }

    /// Kept alive in the engine: dropping it stops the watch.
    pub(super) fn watch_attention(&self, watched: Handle<AssemblerService>) -> Option<FileWatch> {
        watch_file(&self.dir.attention(), move || watched.do_send(AttentionChanged))
            // The assembler still re-reads after the runner's own writes.
            .inspect_err(|e| {
                tracing::warn!("attention.md is not watched, a hand edit is seen after the next update: {e}")
            })
            .ok()
    }

    /// The hub, its outlets (the configured ones, the overrides, the gateway's), and the
    /// feedback tracker and jobs store every user shares.
    pub(super) fn delivery(
        &self,
        policy: &Policy,
        outlets: Vec<Arc<dyn Outlet>>,
        remote_channels: &[String],
    ) -> Result<Delivery, StartError> {
        let (dir, config, d) = (self.dir, self.config, &self.config.delivery);
        let backoff = chrono::Duration::seconds(d.outbox_backoff_s);
        // One of each per process: every user of feedback.jsonl and jobs.json shares it (a
        // JobsStore's clones share its cache).
        let journal = self.journal.clone();
        let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), self.tz);
        let tracker = Rc::new(tracker.with_journal(journal.clone()));
        let jobs = JobsStore::new(dir.jobs());
        let sessions = SessionStore::new(dir.sessions());
        let conversations = Conversations::new(sessions, tracker.clone()).with_journal(journal.clone());
        let outbox = Arc::new(self.state(Owner::Outbox)?);
        let hub = DeliveryHubService::new(outbox, self.clock.clone(), backoff, Some(policy.clone()))
            .with_conversations(conversations.clone())
            .with_channels(Channels::of(config))
            .with_watched(crate::delivery::watched::Watched::of(config))
            .with_limits(chrono::Duration::hours(d.outbox_ttl_nudge_h), d.outbox_max)
            .with_journal(journal);
        let hub = start(hub, &self.metrics, self.restart("DeliveryHub"));
        let events = crate::ipc::EventBus::default();
        for outlet in configured_outlets(dir, config, &events)?.into_iter().chain(outlets) {
            hub.do_send(RegisterOutlet(outlet));
        }
        let gateway = GatewayLink::default();
        let timeout = Duration::from_secs(d.webhook_timeout_s * (d.webhook_attempts as u64 + 1) + 5);
        for channel in remote_channels {
            let remote = RemoteOutlet { channel: channel.clone(), link: gateway.clone(), timeout };
            hub.do_send(RegisterOutlet(Arc::new(remote)));
        }
        let gateway = (!remote_channels.is_empty()).then_some(gateway);
        Ok(Delivery { tracker, jobs, conversations, hub, events, gateway })
    }

    pub(super) fn executors(&self, policy: &Policy, hub: &Hub) -> Result<Execution, StartError> {
        let (x, clock) = (&self.config.executor, self.clock.clone());
        let ttl = chrono::Duration::minutes(x.inject_ttl_minutes);
        let queues = NudgeInjector::new(Arc::new(self.state(Owner::Injector)?), ttl, x.inject_cap);
        let injector = InjectorService::new(queues, policy.clone(), clock.clone());
        let injector = start(injector, &self.metrics, self.restart("NudgeInjector"));
        let heap = DeferManager::in_data_dir(self.dir, x)?;
        let defer = start(DeferService::new(heap, clock), &self.metrics, self.restart("DeferManager"));
        let dispatcher = NudgeDispatcher::new(hub.clone(), DefaultTargets::following(self.live.clone()));
        Ok(Execution { injector, defer, dispatcher })
    }

    pub(super) fn question_broker(&self, hub: &Hub) -> Rc<QuestionBroker> {
        let questions = hub.clone();
        Rc::new(QuestionBroker::new(
            Duration::from_secs(self.config.agent.ask_user_timeout_s),
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
        ))
    }

    pub(super) fn tools(&self, delivery: &Delivery, broker: &Rc<QuestionBroker>) -> Vec<Rc<dyn Tool>> {
        let (config, store) = (self.config, delivery.jobs.clone());
        let cron = JobsCron { store, tz: self.tz, order: config.general.date_order, channels: Channels::of(config) };
        let jobs: Rc<dyn crate::agent::tools::CronJobs> = Rc::new(cron);
        let (dir, tz) = (self.dir, self.tz);
        vec![
            Rc::new(FeedbackTool { tracker: delivery.tracker.clone() }),
            Rc::new(AskUserTool { broker: broker.clone() }),
            Rc::new(CronTool { jobs: jobs.clone() }),
            Rc::new(ReadMemoryTool { memory: dir.memory() }),
            Rc::new(RememberTool { notes: MemoryNotes { path: dir.memory(), tz } }),
            Rc::new(SearchHistoryTool { history: dir.history(), sessions: dir.sessions(), tz }),
            Rc::new(ListJobsTool { jobs }),
        ]
    }

    /// The agent loop and the scheduler its turns run on, and the cell its decision consumer
    /// finds the spawn in once `spawn` has made it.
    pub(super) fn agent_and_scheduler(
        &self,
        provider: &SharedProvider,
        policy: &Policy,
        x: &Execution,
        delivery: &Delivery,
        tools: Vec<Rc<dyn Tool>>,
    ) -> (Scheduler, Rc<OnceCell<ProactiveSpawn>>) {
        let spawn_late = Rc::new(OnceCell::new());
        let consumer = self.decision_consumer(provider, policy, &tools, spawn_late.clone());
        let (config, clock, jobs, tracker) = (self.config, &self.clock, &delivery.jobs, &delivery.tracker);
        let replies =
            FeedbackReplies { tracker: tracker.clone(), jobs: jobs.clone(), tz: self.tz, clock: clock.clone() };
        let agent = Rc::new(AgentLoop {
            provider: provider.clone(),
            embedded: super::stand_in(self.config, provider),
            tools,
            sessions: SessionStore::new(self.dir.sessions()),
            injector: Some(x.injector.clone()),
            inbound_hooks: vec![Rc::new(JobReplies(jobs.clone())), Rc::new(consumer), Rc::new(replies)],
            clock: clock.clone(),
            max_iterations: config.agent.max_iterations,
            conversations: Some(delivery.conversations.clone()),
            feedback: Some(tracker.clone()),
            history: self.history(),
            knowledge: Some(Knowledge {
                memory: self.dir.memory(),
                sessions: self.dir.sessions(),
                tz: self.tz,
                order: config.general.date_order,
            }),
            micro: MicroLimits {
                max_iterations: config.agent.subagent_max_iterations,
                max_tokens: config.agent.subagent_max_tokens,
            },
        });
        let pools = OriginPools::new(config.agent.user_pool, config.agent.system_pool);
        let scheduler = Scheduler::new(Rc::new(Agent(agent)), pools).metered(&self.metrics, "Spine");
        (scheduler, spawn_late)
    }

    fn decision_consumer(
        &self,
        provider: &SharedProvider,
        policy: &Policy,
        tools: &[Rc<dyn Tool>],
        spawn: Rc<OnceCell<ProactiveSpawn>>,
    ) -> DecisionConsumer {
        let router = DecisionRouter {
            store: self.menus(),
            // The rules provider cannot classify free text: only numbers and /pick count.
            classifier: (provider.name() != "rules").then(|| provider.clone()),
            threshold: self.config.discovery.classifier_threshold,
        };
        let (policy, tools, clock) = (policy.clone(), tools.to_vec(), self.clock.clone());
        let executor = ActionExecutor { policy, tools, spawn, clock };
        DecisionConsumer { router, executor, clock: self.clock.clone() }
    }

    /// Kept at least as long as a routine is remembered.
    fn history(&self) -> Option<Rc<dyn HistorySink>> {
        let (context, tz) = (&self.config.context, self.tz);
        context.history_enabled.then(|| {
            let writer = HistoryWriter::new(self.dir.history(), context.routine_forget_days.max(30));
            Rc::new(HistoryHook { writer, tz }) as Rc<dyn HistorySink>
        })
    }

    pub(super) fn spawn(&self, policy: &Policy, scheduler: &Scheduler, x: &Execution) -> ProactiveSpawn {
        let clock = self.clock.clone();
        let inner = AgentSubagent::new(scheduler.clone(), clock.clone(), self.dir.sessions());
        let subagent = WakingSubagent { inner, wake: self.wake.clone(), clock };
        ProactiveSpawn::new(policy.clone(), Rc::new(subagent), x.dispatcher.clone())
    }

    /// The given router, or the executors.
    pub(super) fn router(&self, given: Option<Rc<dyn Router>>, x: &Execution, spawn: ProactiveSpawn) -> Rc<dyn Router> {
        match given {
            Some(r) => r,
            None => Rc::new(Executors {
                dispatcher: x.dispatcher.clone(),
                injector: x.injector.clone(),
                defer: x.defer.clone(),
                spawn,
            }),
        }
    }

    pub(super) fn discoverer(
        &self,
        provider: &SharedProvider,
        policy: &Policy,
        x: &Execution,
    ) -> Result<TaskDiscoverer, StartError> {
        let (dir, config) = (self.dir, self.config);
        let target = match config.discovery.target.trim() {
            "" => config.delivery.default_targets.first().cloned().unwrap_or_else(|| "cli:local".into()),
            t => t.to_owned(),
        };
        Ok(TaskDiscoverer {
            menus: Rc::new(self.menus()),
            guard: self.state(Owner::Discovery)?,
            provider: provider.clone(),
            policy: policy.clone(),
            dispatcher: x.dispatcher.clone(),
            memory_md: dir.memory(),
            history_md: dir.history(),
            heartbeat_md: dir.heartbeat(),
            tz: self.tz,
            order: config.general.date_order,
            cfg: config.discovery.clone(),
            target,
            held: Default::default(),
            backoff: crate::supervise::backoff::LoopBackoff::new("task discovery"),
        })
    }

    pub(super) fn runner(
        &self,
        planning: &Planning,
        policy: &Policy,
        router: Rc<dyn Router>,
        tracker: &Rc<NudgeFeedbackTracker>,
        discoverer: TaskDiscoverer,
        provider: &SharedProvider,
    ) -> Handle<RunnerService> {
        let (dir, config) = (self.dir, self.config);
        let runner = SentinelRunner::new(RunnerDeps {
            assembler: planning.assembler.clone(),
            planner: planning.planner.clone(),
            policy: policy.clone(),
            router,
            clock: self.clock.clone(),
            tz: self.tz,
            order: config.general.date_order,
            tracker: tracker.clone(),
            attention: Some(AttentionUpdater::new(dir.attention(), producers::defaults())),
            cfg: config.sentinel.clone(),
            discovery: config.discovery.enabled.then(|| Box::new(DiscoveryRun(discoverer)) as Box<dyn DiscoveryHook>),
            daily_analysis: config.context.daily_analysis.then(|| dir.user_memory().join("daily_analysis.json")),
            quiet: std::iter::once(config.policy.quiet_hours).chain(config.policy.extra_quiet_hours.clone()).collect(),
        });
        let runner = runner.with_preferences(ProactivityPreferencesReader::for_data_dir(dir));
        let runner = runner.with_decision_cache(crate::sentinel::decision_cache::DecisionCache::in_dir(dir));
        let runner = self.behaviors(runner.with_journal(self.journal.clone()), provider);
        let runner = RunnerService::new(runner).with_triggers(TriggerStore::new(dir.triggers()));
        start(runner, &self.metrics, self.restart("SentinelRunner"))
    }

    /// The extractor needs a model: with the rules provider it would only fail each tick.
    fn behaviors(&self, runner: SentinelRunner, provider: &SharedProvider) -> SentinelRunner {
        let (dir, behaviors) = (self.dir, &self.config.context.behaviors);
        if behaviors.enabled && provider.name() != "rules" {
            let x = BehaviorsExtractor::new(dir.sessions(), dir.behaviors(), provider.clone(), behaviors.clone());
            return runner.with_behaviors(x.with_timezone(self.tz));
        }
        if behaviors.enabled {
            tracing::warn!("context.behaviors is on but no LLM is configured: behaviors.md is not extracted");
        }
        runner
    }

    pub(super) fn heartbeat(
        &self,
        provider: &SharedProvider,
        scheduler: &Scheduler,
        hub: &Hub,
        policy: &Policy,
    ) -> Handle<HeartbeatService> {
        let heartbeat = HeartbeatService::new(HeartbeatDeps {
            provider: provider.clone(),
            heartbeat_md: self.dir.heartbeat(),
            scheduler: scheduler.clone(),
            hub: hub.clone(),
            targets: DefaultTargets::following(self.live.clone()),
            clock: self.clock.clone(),
            cfg: self.config.heartbeat.clone(),
            wake: self.wake.clone(),
            policy: Some(policy.clone()),
            journal: self.journal.clone(),
        });
        start(heartbeat, &self.metrics, self.restart("Heartbeat"))
    }

    /// The cron timer (`None` with `cron.enabled = false`), firing the jobs of `channels`.
    pub(super) fn cron(
        &self,
        scheduler: &Scheduler,
        delivery: &Delivery,
        policy: &Policy,
        channels: Option<Vec<String>>,
    ) -> Option<Handle<CronService>> {
        let (config, clock) = (&self.config.cron, &self.clock);
        config.enabled.then(|| {
            let turns = CronTurns {
                scheduler: scheduler.clone(),
                hub: delivery.hub.clone(),
                policy: policy.clone(),
                sessions: SessionStore::new(self.dir.sessions()),
                config: self.live.clone(),
                clock: clock.clone(),
                // A cron completion is a reason to look at HEARTBEAT.md early.
                on_fired: Some({
                    let (wake, clock) = (self.wake.clone(), clock.clone());
                    Rc::new(move |id: &str| wake.request_wake_now(format!("cron:{id} done"), clock.now()))
                }),
                journal: self.journal.clone(),
            };
            let claimer = Claimer {
                pid: std::process::id(),
                ttl: chrono::Duration::seconds(config.claim_ttl_s as i64),
                filter: ChannelFilter(channels),
                strike_limit: config.strike_limit.max(1),
                strike_min_gap: chrono::Duration::seconds(config.strike_min_gap_s as i64),
            };
            let service = CronService::new(delivery.jobs.clone(), claimer, Rc::new(turns), clock.clone());
            start(service, &self.metrics, self.restart("Cron"))
        })
    }

    /// Rings `ring` on each edit of jobs.json, ending the cron timer's sleep.
    pub(super) fn watch_jobs(&self, ring: Arc<tokio::sync::Notify>) -> Option<FileWatch> {
        watch_file(&self.dir.jobs(), move || ring.notify_one())
            .inspect_err(|e| {
                tracing::warn!("jobs.json is not watched, a peer's edit is seen within cron.max_sleep_s: {e}")
            })
            .ok()
    }
}
