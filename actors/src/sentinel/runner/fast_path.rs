//! The fast path: quiet hours and an unchanged context after a skip decide without the
//! Planner; the signatures that tell an unchanged context from a new one.

use super::*;

impl SentinelRunner {
    fn local_midnight(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        crate::time::local_midnight(now, self.d.tz)
    }

    pub(super) fn fired_today(&self, ctx: &PlannerContext, topic: &str, now: DateTime<Utc>) -> bool {
        let midnight = self.local_midnight(now);
        ctx.fire_history.get(topic).and_then(|h| h.last_fired).is_some_and(|t| t >= midnight)
    }

    /// The context and where its dated items stand: a skip holds only while both are unchanged.
    pub(super) fn signature(&self, ctx: &PlannerContext) -> u64 {
        context_signature(ctx) ^ self.phase
    }

    /// The skip-only rules: quiet hours, and an unchanged context after a skip. Quiet hours
    /// skip unless a high-priority item is within its notice and the gate would still let a
    /// high-priority nudge through them (spec: layer 2, bypassable by high priority): the
    /// Planner decides then, and the gate has the last word.
    pub(super) fn fast_path_rules(&mut self, ctx: &PlannerContext) -> Option<PlannerDecision> {
        let policy = &ctx.nudge_policy_state;
        if policy.in_quiet_hours && !(self.high_due && policy.quiet_bypass_open) {
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
}

/// Which dated items are in the lead their note asks for, their heads-up day, their reminder
/// hour, or just past: an item moving from one to the next is new context for the Planner,
/// however unchanged the files.
pub fn deadline_phase(deadlines: &[crate::context::deadlines::Deadline], now: DateTime<Utc>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for d in deadlines.iter().filter(|d| d.heads_up_window(now).is_some() && now - d.due <= Duration::hours(1)) {
        // The reminder's moment is the item's own notice (a calendar alarm), an hour otherwise.
        let stage = match d.due - now {
            left if left > Duration::hours(24) => 3u8,
            left if !d.is_imminent(now) && left > Duration::zero() => 0,
            left if left > Duration::zero() => 1,
            _ => 2,
        };
        (d.due, &d.title, stage).hash(&mut h);
    }
    h.finish()
}

/// Whether a high-priority item is within its notice (an hour unless its alarm says
/// otherwise) and not past by more than an hour: what may break quiet hours.
pub fn high_priority_due(deadlines: &[crate::context::deadlines::Deadline], now: DateTime<Utc>) -> bool {
    deadlines
        .iter()
        .any(|d| d.priority == raven_proto::Priority::High && d.is_imminent(now) && now - d.due <= Duration::hours(1))
}

/// Memory, history and the active session keys: what makes a new LLM call worthwhile. Kept in
/// the decision cache that every process on the data dir shares, so the hash is the same in
/// each (FxHash, fixed; SipHash over megabytes of notes was most of an idle tick).
pub fn context_signature(ctx: &PlannerContext) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    ctx.memory_md.hash(&mut h);
    ctx.history_md_recent.hash(&mut h);
    for s in &ctx.active_sessions {
        s.session_key.hash(&mut h);
    }
    h.finish()
}
