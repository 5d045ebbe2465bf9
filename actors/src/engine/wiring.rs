//! The steps of `Engine::start_with`, in the order it takes them: each builds one part of the
//! engine from the data dir and its config, starting its actors supervised and metered on the
//! shared clock.
//!
//! Here: what every step shares, the policy, the provider's accounting and the planning. The
//! other parts each have their own file: `delivery`, `execution`, `agent`, `sentinel`, `timers`.

use crate::config::{LiveConfig, RavenConfig};
use crate::context::{AssemblerService, AttentionChanged, ContextAssembler};
use crate::delivery::hub::DeliveryHubService;
use crate::discovery::PendingDecisionStore;
use crate::engine::StartError;
use crate::heartbeat::WakeHandle;
use crate::journal::Journal;
use crate::llm::provider::SharedProvider;
use crate::planner::{PlannerService, ProactivePlanner};
use crate::policy::{self, NudgePolicy, NudgePolicyService};
use crate::store::db::Database;
use crate::store::{owners, owners::Owner, JsonStateStore, StoreError};
use crate::supervise::{start, Handle, Metrics, RestartPolicy};
use crate::watch::{watch_file, FileWatch};
use crate::{clock::SharedClock, data_dir::DataDir};
use std::{rc::Rc, sync::Arc};

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
    /// The state database, once a part asked for it.
    database: std::cell::OnceCell<Arc<Database>>,
}

/// The planner and the context assembler.
pub(super) struct Planning {
    pub(super) planner: Handle<PlannerService>,
    pub(super) assembler: Handle<AssemblerService>,
}

impl<'a> Wiring<'a> {
    pub(super) fn new(dir: &'a DataDir, config: &'a RavenConfig, clock: SharedClock) -> Self {
        let (metrics, tz) = (Metrics::default(), config.general.timezone);
        let (wake, journal) =
            (WakeHandle::from_config(&config.heartbeat), Journal::in_data_dir(dir).counting(metrics.counters()));
        let live = LiveConfig::new(config.clone());
        Wiring { dir, config, clock, metrics, tz, wake, journal, live, database: Default::default() }
    }

    fn restart(&self, actor: &str) -> RestartPolicy {
        RestartPolicy::from(&self.config.supervise).with_fault_from_env(actor)
    }

    /// One owner's rows in the state database: the ledger, the inject queues, the defer
    /// heap, discovery's guard and menus, the triggers, the decision cache.
    fn state(&self, owner: Owner) -> Result<JsonStateStore, StartError> {
        Ok(owners::open_in(self.database()?, self.dir, owner)?)
    }

    /// The state database, opened once per engine (a corrupt one moved aside and reported).
    fn database(&self) -> Result<Arc<Database>, StartError> {
        if let Some(db) = self.database.get() {
            return Ok(db.clone());
        }
        let db = Database::shared(&self.dir.state_db()).map_err(StoreError::from)?;
        Ok(self.database.get_or_init(|| db).clone())
    }

    /// A menu pick is answered before the LLM is called (spec §12).
    fn menus(&self) -> Result<PendingDecisionStore, StartError> {
        Ok(PendingDecisionStore::new(self.state(Owner::Menus)?))
    }

    pub(super) fn policy(&self) -> Result<Policy, StartError> {
        let ledger = policy::ledger_in(self.state(Owner::Policy)?);
        let gate = NudgePolicy::new(self.config.policy.clone(), self.tz);
        let policy = NudgePolicyService::new(gate, Some(ledger), self.clock.clone()).with_journal(self.journal.clone());
        Ok(start(policy, &self.metrics, self.restart("NudgePolicy")))
    }

    /// The provider, its tokens counted per local day, metered and journaled, and the
    /// proactive roles held to `llm.daily_token_budget`; the embedded rules, which spend no
    /// tokens, as they are (nothing counted, nothing written).
    pub(super) fn accounted(&self, inner: SharedProvider) -> Result<SharedProvider, StartError> {
        if !inner.reads_prompt() {
            return Ok(inner);
        }
        Ok(Rc::new(crate::llm::accounted::Accounted {
            inner,
            ledger: crate::llm::daily_tokens::DailyTokens::on(self.state(Owner::LlmTokens)?),
            budget: self.config.llm.daily_token_budget,
            clock: self.clock.clone(),
            tz: self.tz,
            journal: self.journal.clone(),
        }))
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
}

mod agent;
mod delivery;
mod execution;
mod sentinel;
mod timers;

use delivery::Delivery;
use execution::Execution;
