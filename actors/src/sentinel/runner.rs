//! SentinelRunner (spec §2): one tick in the spec's exact order, degrading at every layer.

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
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, ExecutionResult, PlannerContext, PlannerDecision, TickOutcome};
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
    pub tracker: Rc<NudgeFeedbackTracker>,
    pub attention: Option<AttentionUpdater>,
    pub cfg: SentinelConfig,
    pub discovery: Option<Box<dyn DiscoveryHook>>,
    /// Where the DailyAnalysisService keeps the day's result; `None` when it is off.
    pub daily_analysis: Option<std::path::PathBuf>,
    /// The user's quiet hours: the no-reply timer does not run during them.
    pub quiet: Vec<crate::config::Window>,
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
    seq: u64,
    stats: RunnerStats,
    preferences: Option<ProactivityPreferencesReader>,
    behaviors: Option<BehaviorsExtractor>,
    /// A failed daily analysis or behaviors extraction waits before the next try.
    analysis_backoff: LoopBackoff,
    behaviors_backoff: LoopBackoff,
    journal: Journal,
    /// The route and reason of the last skip journaled: the same skip again writes no line.
    journaled_skip: Option<(String, String)>,
}

impl SentinelRunner {
    pub fn new(deps: RunnerDeps) -> Self {
        SentinelRunner {
            d: deps,
            analysis: None,
            skip_cache: None,
            cache: DecisionCache::default(),
            phase: 0,
            seq: 0,
            stats: RunnerStats::default(),
            preferences: None,
            behaviors: None,
            analysis_backoff: LoopBackoff::new("daily analysis"),
            behaviors_backoff: LoopBackoff::new("behaviors extraction"),
            journal: Journal::off(),
            journaled_skip: None,
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

    /// The preferences, tighten-only, take effect before this tick's checks.
    async fn refresh_preferences(&mut self) {
        let Some(reader) = self.preferences.as_mut() else { return };
        let poll = reader.poll();
        for note in &poll.notes {
            tracing::warn!("preferences: {note}");
        }
        if let Some(e) = &poll.error {
            tracing::warn!("preferences not read, the last ones stay: {e}");
        }
        if let Some(o) = poll.send {
            if let Err(e) = self.d.policy.call(SetOverrides(o)).await {
                tracing::error!("preferences not applied: {e}");
                reader.resend();
            }
        }
    }

    async fn extract_behaviors(&mut self, now: chrono::DateTime<chrono::Utc>) {
        let Some(x) = self.behaviors.as_mut() else { return };
        if !self.behaviors_backoff.attempt(now, self.d.tz) {
            return;
        }
        match x.maybe_extract(now).await {
            Ok(r) if r.appended > 0 || !r.errors.is_empty() => {
                self.behaviors_backoff.succeeded();
                tracing::info!(appended = r.appended, errors = ?r.errors, "behaviors extracted")
            }
            Ok(_) => self.behaviors_backoff.succeeded(),
            Err(e) => self.behaviors_backoff.failed(now, &e.to_string()),
        }
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
            let outcome = self.route(d, None, "deferred", Vec::new()).await;
            self.journal.record(self.d.clock.now(), Some("defer"), Event::tick(&outcome));
            out.push(outcome);
        }
        out
    }

    /// One tick, its outcome journaled.
    pub async fn tick_once(&mut self) -> TickOutcome {
        let outcome = self.assemble_and_tick().await;
        self.journal_tick(&outcome);
        outcome
    }

    /// An idle engine writes nothing: a skip that only repeats the last one journaled (the
    /// same route and reason, or the context unchanged since) adds no line; anything else does.
    fn journal_tick(&mut self, outcome: &TickOutcome) {
        let skip = outcome.result.is_none().then(|| (outcome.route.clone(), outcome.decision.reason.clone()));
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
                    route: "degraded".into(),
                    notes: vec![e.to_string()],
                }
            }
        }
    }

    /// Plugs the discovery pipeline in.
    pub fn with_discovery(mut self, hook: Box<dyn DiscoveryHook>) -> Self {
        self.d.discovery = Some(hook);
        self
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.d.clock.now()
    }

    /// Runs discovery once for each drained trigger batch; `Ok(false)` when this engine has
    /// no discovery pipeline (the triggers are consumed and the fact logged).
    pub async fn run_triggered_discovery(&mut self, now: chrono::DateTime<chrono::Utc>) -> Result<bool, String> {
        match self.d.discovery.as_mut() {
            Some(hook) => {
                let ran = hook.run_now(now).await;
                self.journal_discovery(&ran, true);
                Ok(true)
            }
            None => {
                tracing::warn!("a discovery run was requested, but this engine has no discovery pipeline");
                Ok(false)
            }
        }
    }

    pub async fn tick_with_context(&mut self, mut ctx: PlannerContext) -> TickOutcome {
        self.stats.ticks += 1;
        self.recall(&mut ctx);
        let now = ctx.now;
        let mut notes = Vec::new();
        self.maybe_cleanup_feedback(now, &mut notes);
        self.sweep_ignored(now, &mut notes);
        let summary = self.maybe_retune_policy(now, &mut notes).await;
        let deadlines = deadlines_in(&ctx, self.d.tz, self.d.order);
        self.phase = deadline_phase(&deadlines, now);
        let plan = plan_for_day(now, self.d.tz, &ctx.routines, &deadlines);
        self.maybe_daily_analysis(&ctx, &mut notes).await;
        self.refresh_memory_state(&ctx, summary, &plan, &mut notes).await;
        if let Some(hook) = self.d.discovery.as_mut() {
            let ran = hook.maybe_run(now).await;
            self.journal_discovery(&ran, false);
        }

        let window = Duration::seconds(self.d.cfg.slot_window_s as i64);
        let open: Vec<&PlanSlot> =
            plan.iter().filter(|s| s.is_open(now, window) && !self.fired_today(&ctx, &s.topic, now)).collect();
        if let Some(slot) = open.iter().find(|s| s.kind == SlotKind::Recurring) {
            self.stats.scheduled_fires += 1;
            let decision = slot_decision(slot, &ctx, "scheduled recurring slot");
            return self.finish(decision, Some(slot.topic.clone()), "scheduled_fire", &ctx, notes).await;
        }

        if let Some(fast) = self.fast_path_rules(&ctx) {
            self.remember(fast.clone()).await;
            return TickOutcome { decision: fast, result: None, nudge_id: None, route: "fast_path_skip".into(), notes };
        }

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
                let decision = slot_decision(slot, &ctx, "planner down: high-priority deadline fallback");
                return self.finish(decision, Some(slot.topic.clone()), "deadline_fallback", &ctx, notes).await;
            }
        }
        let decision = planned.decision;
        if decision.action == Action::Skip {
            for s in open.iter().filter(|s| s.kind == SlotKind::Deadline) {
                tracing::warn!(topic = %s.topic, "a deadline slot is open but the planner skipped: {}", decision.reason);
                notes.push(format!("unfired deadline slot `{}`", s.topic));
            }
        }
        let route = decision.action.as_str();
        self.finish(decision, None, route, &ctx, notes).await
    }

    /// Route, then remember (the skip signature included).
    async fn finish(
        &mut self,
        decision: PlannerDecision,
        topic: Option<String>,
        route: &str,
        ctx: &PlannerContext,
        notes: Vec<String>,
    ) -> TickOutcome {
        let topic = topic.or_else(|| super::topics::known_topic(&decision, ctx, self.d.tz, self.d.order));
        let mut outcome = self.route(decision.clone(), topic, route, notes).await;
        self.skip_cache =
            (decision.action == Action::Skip).then(|| SkipCache { signature: self.signature(ctx), at: ctx.now });
        self.cache.save(Remembered { skip: self.skip_cache.clone(), last_decision: Some(decision.clone()) });
        self.remember(decision).await;
        if outcome.route.is_empty() {
            outcome.route = route.into();
        }
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

    fn maybe_cleanup_feedback(&mut self, now: DateTime<Utc>, notes: &mut Vec<String>) {
        if let Err(e) = self.d.tracker.trim_if_due(now) {
            notes.push(format!("feedback trim failed: {e}"));
        }
    }

    /// The no-reply timer: what someone could see and nobody answered is `ignored`.
    fn sweep_ignored(&mut self, now: DateTime<Utc>, notes: &mut Vec<String>) {
        let (tz, quiet) = (self.d.tz, &self.d.quiet);
        let asleep = |t: DateTime<Utc>| {
            let local = t.with_timezone(&tz).time();
            quiet.iter().any(|w| w.contains(local))
        };
        match self.d.tracker.sweep_ignored(now, &asleep) {
            Ok(ids) if !ids.is_empty() => tracing::info!(?ids, "no reply: recorded as ignored"),
            Ok(_) => {}
            Err(e) => notes.push(format!("no-reply timer not run: {e}")),
        }
    }

    async fn maybe_retune_policy(&mut self, now: DateTime<Utc>, notes: &mut Vec<String>) -> FeedbackSummary {
        let summary = match self.d.tracker.summary(now) {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("feedback unreadable, tuning skipped: {e}"));
                return FeedbackSummary::default();
            }
        };
        match self.d.policy.call(ApplyTuning(summary.clone())).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => notes.push(format!("retune not saved: {e}")),
            Err(e) => notes.push(format!("retune failed: {e}")),
        }
        summary
    }

    /// At most one analysis a local day, shared through its file with restarts and peers.
    async fn maybe_daily_analysis(&mut self, ctx: &PlannerContext, notes: &mut Vec<String>) {
        let Some(path) = self.d.daily_analysis.clone() else {
            return;
        };
        let today = ctx.now.with_timezone(&self.d.tz).date_naive();
        if self.analysis.as_ref().is_some_and(|a| a.date == today) {
            return;
        }
        self.analysis = daily_analysis::load(&path, today);
        if self.analysis.is_some() || !self.analysis_backoff.attempt(ctx.now, self.d.tz) {
            return;
        }
        match self.d.planner.call_async(AnalyzeDay(ctx.clone(), today)).await {
            Ok(Ok(a)) => {
                self.analysis_backoff.succeeded();
                self.stats.daily_analyses += 1;
                if let Err(e) = daily_analysis::save(&path, &a) {
                    notes.push(format!("daily analysis not saved: {e}"));
                }
                self.analysis = Some(a);
            }
            Ok(Err(e)) => self.analysis_backoff.failed(ctx.now, &e.to_string()),
            Err(e) => self.analysis_backoff.failed(ctx.now, &e.to_string()),
        }
    }

    async fn refresh_memory_state(
        &mut self,
        ctx: &PlannerContext,
        feedback: FeedbackSummary,
        plan: &[PlanSlot],
        notes: &mut Vec<String>,
    ) {
        let Some(updater) = &self.d.attention else {
            return;
        };
        let input = ProducerInput {
            now: ctx.now,
            tz: self.d.tz,
            order: self.d.order,
            memory_md: ctx.memory_md.clone(),
            history_md: ctx.history_md_recent.clone(),
            routines: ctx.routines.clone(),
            feedback,
            plan: plan.to_vec(),
            daily_analysis: self.analysis.clone(),
        };
        match updater.update(&input) {
            Ok(report) => {
                notes.extend(report.failed.iter().map(|(s, why)| format!("attention section `{s}` kept: {why}")));
                if report.written {
                    let _ = self.d.assembler.call(AttentionChanged).await;
                }
            }
            Err(e) => notes.push(format!("{} not updated: {e}", updater.path().display())),
        }
    }

    fn local_midnight(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        crate::time::local_midnight(now, self.d.tz)
    }

    fn fired_today(&self, ctx: &PlannerContext, topic: &str, now: DateTime<Utc>) -> bool {
        let midnight = self.local_midnight(now);
        ctx.fire_history.get(topic).and_then(|h| h.last_fired).is_some_and(|t| t >= midnight)
    }

    /// The context and where its dated items stand: a skip holds only while both are unchanged.
    fn signature(&self, ctx: &PlannerContext) -> u64 {
        context_signature(ctx) ^ self.phase
    }

    /// The skip-only rules: quiet hours, and an unchanged context after a skip.
    fn fast_path_rules(&mut self, ctx: &PlannerContext) -> Option<PlannerDecision> {
        if ctx.nudge_policy_state.in_quiet_hours {
            self.stats.skipped_quiet_hours += 1;
            return Some(PlannerDecision::skip("fast_path:quiet_hours"));
        }
        let ttl = Duration::seconds(self.d.cfg.skip_cache_ttl_s as i64);
        let last_was_skip = ctx.last_decision.as_ref().is_some_and(|d| d.action == Action::Skip);
        if let Some(cache) = &self.skip_cache {
            if last_was_skip && ctx.now - cache.at < ttl && cache.signature == self.signature(ctx) {
                self.stats.skipped_unchanged += 1;
                return Some(PlannerDecision::skip(UNCHANGED));
            }
        }
        None
    }

    fn next_nudge_id(&mut self, now: DateTime<Utc>) -> String {
        self.seq += 1;
        format!("n-{}-{}-{}", now.format("%Y%m%dT%H%M%S"), std::process::id(), self.seq)
    }

    async fn route(
        &mut self,
        decision: PlannerDecision,
        topic: Option<String>,
        route: &str,
        notes: Vec<String>,
    ) -> TickOutcome {
        let mut outcome =
            TickOutcome { decision: decision.clone(), result: None, nudge_id: None, route: route.into(), notes };
        let now = self.d.clock.now();
        if decision.action == Action::Skip {
            return outcome;
        }
        let id = self.next_nudge_id(now);
        let said = Dispatch {
            nudge_id: id.clone(),
            topic: topic.clone().unwrap_or_else(|| crate::policy::topic::topic_of(&gate_content(&decision))),
            priority: decision.priority,
            source: if route == "deferred" { Source::Defer } else { Source::Sentinel },
            job: None,
        };
        match decision.action {
            Action::Skip => {}
            Action::SpawnAgent => {
                outcome.result = Some(self.d.router.route(&decision, &said).await);
                outcome.nudge_id = Some(id);
            }
            Action::NudgeInject | Action::NudgeDefer => {
                // Queued, not yet delivered: the gate checks now; the fire is recorded when
                // the inject rides a reply or the defer goes out (through the gate again).
                let nudge = Nudge::of(&decision, topic);
                outcome.result = Some(match self.d.policy.call(Check(nudge)).await {
                    Ok(v) if v.allow => {
                        let r = self.d.router.route(&decision, &said).await;
                        if r.delivered {
                            outcome.nudge_id = Some(id);
                        }
                        r
                    }
                    Ok(v) => {
                        outcome.route = format!("{route}:denied");
                        ExecutionResult::denied(&v)
                    }
                    Err(e) => ExecutionResult::failed(format!("policy unavailable: {e}")),
                });
            }
            _ => {
                // Delivered means written into its conversation, with its dispatched record,
                // by the hub (see `delivery::conversation`).
                let nudge = Nudge::of(&decision, topic);
                let router = self.d.router.clone();
                let gated = dispatch_through(&self.d.policy, nudge, || async {
                    let r = router.route(&decision, &said).await;
                    if r.delivered {
                        Ok(r)
                    } else {
                        Err(r)
                    }
                })
                .await;
                outcome.result = Some(match gated {
                    Gated::Delivered(r) => {
                        outcome.nudge_id = Some(id);
                        r
                    }
                    Gated::Failed(r) => r,
                    Gated::Denied(v) => {
                        outcome.route = format!("{route}:denied");
                        ExecutionResult::denied(&v)
                    }
                    Gated::Unavailable(e) => ExecutionResult::failed(format!("policy unavailable: {e}")),
                });
            }
        }
        outcome
    }
}

/// What the gate files a decision's topic under when it has no explicit one.
fn gate_content(d: &PlannerDecision) -> String {
    match d.action {
        Action::SpawnAgent => d.spawn_task.clone().unwrap_or_default(),
        _ => d.nudge_message.clone().unwrap_or_default(),
    }
}

/// A plan slot as a decision: the pre-planned message, to the most recently active session.
fn slot_decision(slot: &PlanSlot, ctx: &PlannerContext, why: &str) -> PlannerDecision {
    let mut d = PlannerDecision::with_message(Action::Nudge, slot.message.clone(), format!("{why}: {}", slot.topic));
    d.priority = slot.priority;
    d.proactivity_score = 1.0;
    d.target_session = ctx.active_sessions.iter().max_by_key(|s| s.last_active).map(|s| s.session_key.clone());
    d
}

/// Which dated items are in their heads-up day, their reminder hour, or just past: an item
/// moving from one to the next is new context for the Planner, however unchanged the files.
pub fn deadline_phase(deadlines: &[crate::context::deadlines::Deadline], now: DateTime<Utc>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for d in deadlines.iter().filter(|d| d.due - now <= Duration::hours(24) && now - d.due <= Duration::hours(1)) {
        // The reminder's moment is the item's own notice (a calendar alarm), an hour otherwise.
        let stage = match d.due - now {
            left if !d.is_imminent(now) && left > Duration::zero() => 0u8,
            left if left > Duration::zero() => 1,
            _ => 2,
        };
        (d.due, &d.title, stage).hash(&mut h);
    }
    h.finish()
}

/// Memory, history and the active session keys: what makes a new LLM call worthwhile.
pub fn context_signature(ctx: &PlannerContext) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ctx.memory_md.hash(&mut h);
    ctx.history_md_recent.hash(&mut h);
    for s in &ctx.active_sessions {
        s.session_key.hash(&mut h);
    }
    h.finish()
}
