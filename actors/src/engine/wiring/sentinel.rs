//! The Sentinel: the task discoverer and the runner that ticks, with its preferences, decision
//! cache, behaviours extractor and triggers.

use super::{Execution, Planning, Policy, Wiring};
use crate::context::attention::{producers, AttentionUpdater};
use crate::context::{behaviors_extractor::BehaviorsExtractor, preferences::ProactivityPreferencesReader};
use crate::discovery::DiscoveryRun;
use crate::discovery::TaskDiscoverer;
use crate::engine::StartError;
use crate::feedback::NudgeFeedbackTracker;
use crate::llm::provider::SharedProvider;
use crate::sentinel::decision_cache::DecisionCache;
use crate::sentinel::{triggers::TriggerStore, DiscoveryHook, Router, RunnerDeps, RunnerService, SentinelRunner};
use crate::store::owners::Owner;
use crate::supervise::{start, Handle};
use std::rc::Rc;

impl Wiring<'_> {
    pub(in crate::engine) fn discoverer(
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
            menus: Rc::new(self.menus()?),
            guard: self.state(Owner::Discovery)?,
            provider: provider.clone(),
            policy: policy.clone(),
            dispatcher: x.dispatcher.clone(),
            memory_md: dir.memory(),
            history_md: dir.history(),
            heartbeat_md: dir.heartbeat(),
            tz: self.tz,
            order: config.general.date_order,
            language: config.general.language,
            cfg: config.discovery.clone(),
            target,
            held: Default::default(),
            backoff: crate::supervise::backoff::LoopBackoff::new("task discovery"),
        })
    }

    pub(in crate::engine) fn runner(
        &self,
        planning: &Planning,
        policy: &Policy,
        router: Rc<dyn Router>,
        tracker: &Rc<NudgeFeedbackTracker>,
        discoverer: TaskDiscoverer,
        provider: &SharedProvider,
    ) -> Result<Handle<RunnerService>, StartError> {
        let (dir, config) = (self.dir, self.config);
        let runner = SentinelRunner::new(RunnerDeps {
            assembler: planning.assembler.clone(),
            planner: planning.planner.clone(),
            policy: policy.clone(),
            router,
            clock: self.clock.clone(),
            tz: self.tz,
            order: config.general.date_order,
            ladder: config.anticipation.ladder(),
            language: config.general.language,
            tracker: tracker.clone(),
            attention: Some(AttentionUpdater::new(dir.attention(), producers::defaults())),
            cfg: config.sentinel.clone(),
            // Always there: the daily run keeps to `discovery.enabled` itself, and `raven discover`
            // is a request the user makes, so it runs with the daily menu off too.
            discovery: Some(Box::new(DiscoveryRun(discoverer)) as Box<dyn DiscoveryHook>),
            daily_analysis: config.context.daily_analysis.then(|| dir.user_memory().join("daily_analysis.json")),
            quiet: std::iter::once(config.policy.quiet_hours).chain(config.policy.extra_quiet_hours.clone()).collect(),
            brief: config.brief.enabled.then(|| config.brief.time(&config.policy.quiet_hours)),
        });
        let runner = runner.with_preferences(ProactivityPreferencesReader::for_data_dir(dir));
        let runner = runner.with_decision_cache(DecisionCache::on(self.state(Owner::DecisionCache)?));
        let runner = self.behaviors(runner.with_journal(self.journal.clone()), provider);
        let runner = RunnerService::new(runner).with_triggers(TriggerStore::new(self.state(Owner::Triggers)?));
        Ok(start(runner, &self.metrics, self.restart("SentinelRunner")))
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
}
