//! Where the runner sends a decision once the gate allowed it. The executors (dispatcher,
//! injector, defer manager, spawn) implement it; tests record what was routed.

use crate::feedback::Dispatch;
use futures_util::future::LocalBoxFuture;
use raven_proto::{ExecutionResult, PlannerDecision};

pub trait Router {
    /// Deliver (or queue) `decision`; `said` is what its conversation and the feedback log
    /// record once it is delivered (its nudge id, topic and source). For spawn_agent the
    /// executor runs its own policy check.
    fn route<'a>(&'a self, decision: &'a PlannerDecision, said: &'a Dispatch) -> LocalBoxFuture<'a, ExecutionResult>;

    /// Deferred decisions whose session has settled, taken out of the heap: the runner
    /// routes them as nudges, through the gate again.
    fn due_deferred(&self) -> LocalBoxFuture<'_, Vec<PlannerDecision>> {
        Box::pin(async { Vec::new() })
    }
}
