//! What a tick does before it decides: the preferences and behaviours refreshed before the
//! context is assembled, then the chores on it (feedback cleanup, ignored sweep, retune, the
//! day's plan, the morning brief, daily analysis, memory state, discovery).

use super::*;

impl SentinelRunner {
    /// The chores before deciding, in order: the feedback log's cleanup, the ignored sweep,
    /// the gate's retune (and the kinds asked to come earlier, into `ctx`), the day's plan
    /// (deadlines and routines), the brief, the daily analysis, the memory and preferences
    /// refresh, and task discovery. The day's plan.
    pub(super) async fn chores(&mut self, ctx: &mut PlannerContext, notes: &mut Vec<String>) -> Vec<PlanSlot> {
        let now = ctx.now;
        self.maybe_cleanup_feedback(now, notes);
        self.sweep_ignored(now, notes);
        let summary = self.maybe_retune_policy(now, notes).await;
        // The kinds the user asked to hear of earlier: for the brief and the Planner alike.
        ctx.earlier_kinds = summary.earlier_kinds.clone();
        let ctx = &*ctx;
        let deadlines = deadlines_in(ctx, self.d.tz, self.d.order, &self.d.ladder);
        self.phase = super::deadline_phase(&deadlines, now);
        self.high_due = super::high_priority_due(&deadlines, now);
        let lang = self.d.language.resolve(&ctx.memory_md);
        let plan = plan_for_day(now, self.d.tz, &ctx.routines, &deadlines, lang);
        self.maybe_brief(ctx, &deadlines, &summary, lang).await;
        self.maybe_daily_analysis(ctx, notes).await;
        self.refresh_memory_state(ctx, summary, &plan, notes).await;
        if let Some(hook) = self.d.discovery.as_mut() {
            let ran = hook.maybe_run(now).await;
            self.journal_discovery(&ran, false);
        }
        plan
    }

    /// The preferences, tighten-only, take effect before this tick's checks.
    pub(super) async fn refresh_preferences(&mut self) {
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

    pub(super) async fn extract_behaviors(&mut self, now: chrono::DateTime<chrono::Utc>) {
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
        match self.d.policy.call_async(ApplyTuning(summary.clone())).await {
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
}
