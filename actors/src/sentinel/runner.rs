//! SentinelRunner (spec §2): one tick in the spec's exact order, degrading at every layer.

mod brief;
mod chores;
mod fast_path;
mod route;

pub use fast_path::{context_signature, deadline_phase, high_priority_due};
use route::slot_decision;

use super::decision_cache::{DecisionCache, Remembered, SkipCache};
use super::router::DiscoveryHook;
use crate::clock::SharedClock;
use crate::config::SentinelConfig;
use crate::context::attention::{AttentionUpdater, ProducerInput};
use crate::context::behaviors_extractor::BehaviorsExtractor;
use crate::context::daily_analysis::{self, DailyAnalysis};
use crate::context::deadlines::deadlines_in;
use crate::context::plan::{plan_for_day, PlanSlot, SlotKind};
use crate::context::preferences::ProactivityPreferencesReader;
use crate::context::{Assemble, AssemblerService, AttentionChanged, RememberLastDecision};
use crate::executor::Router;
use crate::feedback::{Dispatch, FeedbackSummary, NudgeFeedbackTracker, Source};
use crate::journal::{Event, Journal};
use crate::planner::{AnalyzeDay, Decide, Planned, PlannerService};
use crate::policy::SetOverrides;
use crate::policy::{dispatch_through, ApplyTuning, Check, Gated, Nudge, NudgePolicyService, Snapshot};
use crate::supervise::backoff::LoopBackoff;
use crate::supervise::Handle;
use crate::time::Language;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, ExecutionResult, Path, PlannerContext, PlannerDecision, Route, TickOutcome};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// The reason of a skip because nothing changed since the last skip.
const UNCHANGED: &str = "fast_path:unchanged_context";

pub struct RunnerDeps {
    pub assembler: Handle<AssemblerService>,
    pub planner: Handle<PlannerService>,
    pub policy: Handle<NudgePolicyService>,
    pub router: Rc<dyn Router>,
    pub clock: SharedClock,
    pub tz: Tz,
    /// How numeric dates in the notes read.
    pub order: crate::time::DateOrder,
    /// How far ahead each kind of item gets its heads-up (`[anticipation]`).
    pub ladder: crate::time::Ladder,
    /// The language of the day's plan slots (`general.language`).
    pub language: crate::time::LanguageSetting,
    pub tracker: Rc<NudgeFeedbackTracker>,
    pub attention: Option<AttentionUpdater>,
    pub cfg: SentinelConfig,
    pub discovery: Option<Box<dyn DiscoveryHook>>,
    /// Where the DailyAnalysisService keeps the day's result; `None` when it is off.
    pub daily_analysis: Option<std::path::PathBuf>,
    /// The user's quiet hours: the no-reply timer does not run during them.
    pub quiet: Vec<crate::config::Window>,
    /// The local time of the morning brief; `None`: no brief.
    pub brief: Option<crate::config::TimeOfDay>,
}

/// What the ticks did, for `raven status`, the benchmark and `raven simulate`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerStats {
    pub ticks: u64,
    pub planner_calls: u64,
    pub skipped_quiet_hours: u64,
    pub skipped_unchanged: u64,
    pub scheduled_fires: u64,
    pub deadline_fallbacks: u64,
    pub degraded_ticks: u64,
    pub daily_analyses: u64,
}

pub struct SentinelRunner {
    d: RunnerDeps,
    analysis: Option<DailyAnalysis>,
    skip_cache: Option<SkipCache>,
    /// Where the skip cache and the last decision are shared with other processes.
    cache: DecisionCache,
    /// Where this tick's dated items stand (see [`deadline_phase`]), part of the skip signature.
    phase: u64,
    /// A high-priority item of this tick is within its notice (see [`high_priority_due`]).
    high_due: bool,
    stats: RunnerStats,
    preferences: Option<ProactivityPreferencesReader>,
    behaviors: Option<BehaviorsExtractor>,
    /// A failed daily analysis or behaviors extraction waits before the next try.
    analysis_backoff: LoopBackoff,
    behaviors_backoff: LoopBackoff,
    journal: Journal,
    /// The route and reason of the last skip journaled: the same skip again writes no line.
    journaled_skip: Option<(Route, String)>,
    /// The day's brief and the heads-ups briefs said (read from the cache on the first tick).
    briefed: Option<super::decision_cache::Briefed>,
    /// What the brief sent in this tick's chores came to, for the tick's outcome.
    brief_sent: Option<TickOutcome>,
}

impl SentinelRunner {
    pub fn new(deps: RunnerDeps) -> Self {
        SentinelRunner {
            d: deps,
            analysis: None,
            skip_cache: None,
            cache: DecisionCache::default(),
            phase: 0,
            high_due: false,
            stats: RunnerStats::default(),
            preferences: None,
            behaviors: None,
            analysis_backoff: LoopBackoff::new("daily analysis"),
            behaviors_backoff: LoopBackoff::new("behaviors extraction"),
            journal: Journal::off(),
            journaled_skip: None,
            briefed: None,
            brief_sent: None,
        }
    }

    /// Each tick's outcome (and each deferred decision sent) goes to the decision journal.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// The skip cache and the last decision are read from and written to `cache` each tick.
    pub fn with_decision_cache(mut self, cache: DecisionCache) -> Self {
        self.cache = cache;
        self
    }

    /// Re-reads the user's proactivity preferences at the start of every tick (spec §5).
    pub fn with_preferences(mut self, reader: ProactivityPreferencesReader) -> Self {
        self.preferences = Some(reader);
        self
    }

    /// Runs the behaviors extractor on every tick (it acts only on settled sessions).
    pub fn with_behaviors(mut self, extractor: BehaviorsExtractor) -> Self {
        self.behaviors = Some(extractor);
        self
    }

    pub fn stats(&self) -> &RunnerStats {
        &self.stats
    }

    /// The DeferManager loop's step: deferred decisions whose session settled go out as
    /// nudges, through the gate again.
    pub async fn poll_deferred(&mut self) -> Vec<TickOutcome> {
        let mut out = Vec::new();
        for mut d in self.d.router.due_deferred().await {
            d.action = Action::Nudge;
            let outcome = self.route(d, None, Path::Deferred, Vec::new()).await;
            self.journal.record(self.d.clock.now(), Some("defer"), Event::tick(&outcome));
            out.push(outcome);
        }
        out
    }

    /// One tick, its outcome journaled.
    pub async fn tick_once(&mut self) -> TickOutcome {
        let mut outcome = self.assemble_and_tick().await;
        self.journal_tick(&outcome);
        outcome.brief = self.brief_sent.take().map(Box::new);
        outcome
    }

    /// An idle engine writes nothing: a skip that only repeats the last one journaled (the
    /// same route and reason, or the context unchanged since) adds no line; anything else does.
    fn journal_tick(&mut self, outcome: &TickOutcome) {
        let skip = outcome.result.is_none().then(|| (outcome.route, outcome.decision.reason.clone()));
        let unchanged = outcome.decision.reason == UNCHANGED && self.journaled_skip.is_some();
        if skip.is_some() && (unchanged || skip == self.journaled_skip) {
            return;
        }
        self.journaled_skip = skip;
        self.journal.record(self.d.clock.now(), Some("sentinel"), Event::tick(outcome));
    }

    fn journal_discovery(&self, ran: &crate::discovery::Discovered, requested: bool) {
        if let Some(event) = ran.event(requested) {
            self.journal.record(self.d.clock.now(), Some("discovery"), event);
        }
    }

    /// Assemble, then tick. An assembler failure becomes a skip: the runner never fails.
    async fn assemble_and_tick(&mut self) -> TickOutcome {
        let now = self.d.clock.now();
        self.refresh_preferences().await;
        self.extract_behaviors(now).await;
        let policy = self.d.policy.call(Snapshot).await.ok();
        match self.d.assembler.call(Assemble { now, policy }).await {
            Ok((ctx, degraded)) => {
                let mut outcome = self.tick_with_context(ctx).await;
                outcome.notes.extend(degraded.into_iter().map(|(f, why)| format!("degraded {f}: {why}")));
                outcome
            }
            Err(e) => {
                self.stats.ticks += 1;
                self.stats.degraded_ticks += 1;
                tracing::error!("tick degraded to skip: the context could not be assembled: {e}");
                TickOutcome {
                    decision: PlannerDecision::skip(format!("assembler_error:{e}")),
                    result: None,
                    nudge_id: None,
                    route: Route::of(Path::Degraded),
                    notes: vec![e.to_string()],
                    brief: None,
                }
            }
        }
    }

    /// Plugs the discovery pipeline in.
    #[cfg(test)]
    pub fn with_discovery(mut self, hook: Box<dyn DiscoveryHook>) -> Self {
        self.d.discovery = Some(hook);
        self
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.d.clock.now()
    }

    /// Runs discovery once for each drained trigger batch; `Ok(false)` when this engine has
    /// no discovery pipeline (the triggers are consumed and the fact logged).
    pub async fn run_triggered_discovery(&mut self, now: chrono::DateTime<chrono::Utc>) -> bool {
        match self.d.discovery.as_mut() {
            Some(hook) => {
                let ran = hook.run_now(now).await;
                self.journal_discovery(&ran, true);
                true
            }
            None => {
                tracing::warn!("a discovery run was requested, but this engine has no discovery pipeline");
                false
            }
        }
    }

    /// One tick on an assembled context, as named steps: recall what the last tick left, run
    /// the chores (which plan the day), fire an open scheduled slot, else take the fast path,
    /// else ask the Planner (with the outage fallback), and finish.
    pub async fn tick_with_context(&mut self, mut ctx: PlannerContext) -> TickOutcome {
        self.stats.ticks += 1;
        self.recall(&mut ctx);
        self.add_briefed(&mut ctx);
        let mut notes = Vec::new();
        let plan = self.chores(&mut ctx, &mut notes).await;
        // What a brief sent in the chores told counts for the Planner of this tick too.
        self.add_briefed(&mut ctx);
        let window = Duration::seconds(self.d.cfg.slot_window_s as i64);
        let open: Vec<&PlanSlot> =
            plan.iter().filter(|s| s.is_open(ctx.now, window) && !self.fired_today(&ctx, &s.topic, ctx.now)).collect();
        if let Some(slot) = open.iter().find(|s| s.kind == SlotKind::Recurring) {
            self.stats.scheduled_fires += 1;
            let decision = slot_decision(slot, &ctx, "scheduled recurring slot");
            return self.finish(decision, Some(slot.topic.clone()), Path::ScheduledFire, &ctx, notes).await;
        }
        if let Some(fast) = self.fast_path_rules(&ctx) {
            self.remember(fast.clone()).await;
            return TickOutcome {
                decision: fast,
                result: None,
                nudge_id: None,
                route: Route::of(Path::FastPathSkip),
                notes,
                brief: None,
            };
        }
        self.ask_planner(&ctx, &open, notes).await
    }

    /// The Planner's decision, finished; while it fails, only a high-priority deadline slot
    /// that is open goes out (through the gate), and a skip with a deadline slot open says so.
    async fn ask_planner(&mut self, ctx: &PlannerContext, open: &[&PlanSlot], mut notes: Vec<String>) -> TickOutcome {
        self.stats.planner_calls += 1;
        let planned = match self.d.planner.call_async(Decide(ctx.clone())).await {
            Ok(p) => p,
            Err(e) => {
                Planned { decision: PlannerDecision::skip(format!("planner_error:{e}")), error: Some(e.to_string()) }
            }
        };
        if let Some(err) = &planned.error {
            notes.push(format!("planner failed: {err}"));
            // Outage fallback: only high-priority deadline slots, and only through the gate.
            let high = open.iter().find(|s| s.kind == SlotKind::Deadline && s.priority == raven_proto::Priority::High);
            if let Some(slot) = high {
                self.stats.deadline_fallbacks += 1;
                let decision = slot_decision(slot, ctx, "planner down: high-priority deadline fallback");
                return self.finish(decision, Some(slot.topic.clone()), Path::DeadlineFallback, ctx, notes).await;
            }
        }
        let decision = planned.decision;
        if decision.action == Action::Skip {
            for s in open.iter().filter(|s| s.kind == SlotKind::Deadline) {
                tracing::warn!(topic = %s.topic, "a deadline slot is open but the planner skipped: {}", decision.reason);
                notes.push(format!("unfired deadline slot `{}`", s.topic));
            }
        }
        let path = Path::Planned(decision.action);
        self.finish(decision, None, path, ctx, notes).await
    }

    /// Route, then remember (the skip signature included).
    async fn finish(
        &mut self,
        decision: PlannerDecision,
        topic: Option<String>,
        path: Path,
        ctx: &PlannerContext,
        notes: Vec<String>,
    ) -> TickOutcome {
        let topic = topic.or_else(|| super::topics::known_topic(&decision, ctx, self.d.tz, self.d.order));
        let outcome = self.route(decision.clone(), topic, path, notes).await;
        self.skip_cache =
            (decision.action == Action::Skip).then(|| SkipCache { signature: self.signature(ctx), at: ctx.now });
        self.cache.save(Remembered { skip: self.skip_cache.clone(), last_decision: Some(decision.clone()) });
        self.remember(decision).await;
        outcome
    }

    /// What the last tick of any process on this data dir left: its skip cache and decision.
    fn recall(&mut self, ctx: &mut PlannerContext) {
        let Some(r) = self.cache.load() else { return };
        self.skip_cache = r.skip;
        if r.last_decision.is_some() {
            ctx.last_decision = r.last_decision;
        }
    }

    async fn remember(&self, decision: PlannerDecision) {
        if let Err(e) = self.d.assembler.call(RememberLastDecision(decision)).await {
            tracing::warn!("last decision not remembered: {e}");
        }
    }
}
