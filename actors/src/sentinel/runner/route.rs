//! Where a decision goes once made: through the one check-and-record to the router, or
//! checked and queued (an inject, a defer), or to a spawn; and what a plan slot decides.

use super::*;

impl SentinelRunner {
    /// A nudge id no other runner gives: the time, the process, and a count shared by every
    /// runner of the process (two engines in one process never hand out the same id, which
    /// an outlet would take for a send it already made).
    pub(super) fn next_nudge_id(&mut self, now: DateTime<Utc>) -> String {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        format!("n-{}-{}-{}", now.format("%Y%m%dT%H%M%S"), std::process::id(), seq)
    }

    pub(super) async fn route(
        &mut self,
        decision: PlannerDecision,
        topic: Option<String>,
        path: Path,
        notes: Vec<String>,
    ) -> TickOutcome {
        if decision.action == Action::Skip {
            return TickOutcome { decision, result: None, nudge_id: None, route: Route::of(path), notes, brief: None };
        }
        let said = Dispatch {
            nudge_id: self.next_nudge_id(self.d.clock.now()),
            topic: topic.clone().unwrap_or_else(|| crate::policy::topic::topic_of(&gate_content(&decision))),
            priority: decision.priority,
            source: if path == Path::Deferred { Source::Defer } else { Source::Sentinel },
            job: None,
            items: Vec::new(),
        };
        self.route_said(decision, topic, said, path, notes).await
    }

    /// [`Self::route`] with what the conversation will record of it made by the caller (a
    /// brief's items are recorded with it).
    pub(super) async fn route_said(
        &mut self,
        decision: PlannerDecision,
        topic: Option<String>,
        said: Dispatch,
        path: Path,
        notes: Vec<String>,
    ) -> TickOutcome {
        let mut outcome = TickOutcome {
            decision: decision.clone(),
            result: None,
            nudge_id: None,
            route: Route::of(path),
            notes,
            brief: None,
        };
        let id = said.nudge_id.clone();
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
                        outcome.route.denied = true;
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
                        outcome.route.denied = true;
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
pub(super) fn slot_decision(slot: &PlanSlot, ctx: &PlannerContext, why: &str) -> PlannerDecision {
    let mut d = PlannerDecision::with_message(Action::Nudge, slot.message.clone(), format!("{why}: {}", slot.topic));
    d.priority = slot.priority;
    d.proactivity_score = 1.0;
    d.target_session =
        raven_proto::planner_context::latest_private(&ctx.active_sessions).map(|s| s.session_key.clone());
    d
}
