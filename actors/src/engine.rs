//! Wiring: every actor of the engine, built from a data dir and its config, each supervised
//! and metered, sharing one clock and one state store.

use crate::clock::SharedClock;
use crate::config::RavenConfig;
use crate::context::attention::{producers, AttentionUpdater};
use crate::context::{AssemblerService, AttentionChanged, ContextAssembler};
use crate::data_dir::DataDir;
use crate::feedback::NudgeFeedbackTracker;
use crate::planner::openai::OpenAiProvider;
use crate::planner::provider::SharedProvider;
use crate::planner::rules::RulesProvider;
use crate::planner::{PlannerService, ProactivePlanner};
use crate::policy::{NudgePolicy, NudgePolicyService};
use crate::sentinel::{Router, RunnerDeps, RunnerService, SentinelRunner};
use crate::store::JsonStateStore;
use crate::supervise::{start, Handle, Metrics, RestartPolicy};
use crate::watch::{watch_file, FileWatch};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

pub mod sim;

pub struct Engine {
    pub metrics: Metrics,
    pub policy: Handle<NudgePolicyService>,
    pub planner: Handle<PlannerService>,
    pub assembler: Handle<AssemblerService>,
    pub runner: Handle<RunnerService>,
    pub provider_name: String,
    /// Kept alive: dropping it stops the attention.md watch.
    _attention_watch: Option<FileWatch>,
}

/// The configured provider: OpenAI-compatible when `llm.base_url` is set, else the embedded
/// rules.
pub fn provider(config: &RavenConfig) -> Result<SharedProvider, String> {
    let llm = &config.llm;
    if llm.base_url.trim().is_empty() {
        return Ok(Rc::new(RulesProvider::new(config.general.timezone)));
    }
    let key = std::env::var(&llm.api_key_env).ok();
    OpenAiProvider::new(
        &llm.base_url,
        &llm.model,
        key,
        Duration::from_secs(llm.timeout_s),
    )
    .map(|p| Rc::new(p) as SharedProvider)
    .map_err(|e| format!("llm provider: {e}"))
}

impl Engine {
    /// Starts the actors on the current actix arbiter, with the configured provider.
    pub fn start(
        dir: &DataDir,
        config: &RavenConfig,
        clock: SharedClock,
        router: Rc<dyn Router>,
    ) -> Result<Engine, String> {
        Engine::start_with_provider(dir, config, clock, router, provider(config)?)
    }

    /// The same, with a given provider (a recorded one, a test's).
    pub fn start_with_provider(
        dir: &DataDir,
        config: &RavenConfig,
        clock: SharedClock,
        router: Rc<dyn Router>,
        provider: SharedProvider,
    ) -> Result<Engine, String> {
        dir.ensure()
            .map_err(|e| format!("data dir {}: {e}", dir.root().display()))?;
        let tz = config.general.timezone;
        let metrics = Metrics::default();
        let restart =
            |actor: &str| RestartPolicy::from(&config.supervise).with_fault_from_env(actor);
        let store = Arc::new(JsonStateStore::new(dir.state()));
        let policy = start(
            NudgePolicyService::new(
                NudgePolicy::new(config.policy.clone(), tz),
                Some(store),
                clock.clone(),
            ),
            &metrics,
            restart("NudgePolicy"),
        );
        let provider_name = provider.name().to_owned();
        let planner = start(
            PlannerService::new(ProactivePlanner::new(provider)),
            &metrics,
            restart("Planner"),
        );
        let assembler = start(
            AssemblerService::new(ContextAssembler::new(dir, config.context.clone())),
            &metrics,
            restart("ContextAssembler"),
        );
        let watched = assembler.clone();
        let attention_watch =
            match watch_file(&dir.attention(), move || watched.do_send(AttentionChanged)) {
                Ok(w) => Some(w),
                Err(e) => {
                    // The assembler still re-reads after the runner's own writes.
                    tracing::warn!(
                    "attention.md is not watched, a hand edit is seen after the next update: {e}"
                );
                    None
                }
            };
        let runner = SentinelRunner::new(RunnerDeps {
            assembler: assembler.clone(),
            planner: planner.clone(),
            policy: policy.clone(),
            router,
            clock,
            tz,
            tracker: NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), tz),
            attention: Some(AttentionUpdater::new(
                dir.attention(),
                producers::defaults(),
            )),
            cfg: config.sentinel.clone(),
            discovery: None,
            daily_analysis: config
                .context
                .daily_analysis
                .then(|| dir.user_memory().join("daily_analysis.json")),
        });
        let runner = start(
            RunnerService::new(runner),
            &metrics,
            restart("SentinelRunner"),
        );
        Ok(Engine {
            metrics,
            policy,
            planner,
            assembler,
            runner,
            provider_name,
            _attention_watch: attention_watch,
        })
    }
}

#[cfg(test)]
mod tests;
