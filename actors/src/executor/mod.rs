//! The execution paths (spec §6, §7): the DeliveryHub and its outlets, the NudgeDispatcher,
//! the NudgeInjector, the DeferManager and ProactiveSpawn, behind the runner's `Router`.

pub mod defer;
pub(crate) mod dispatcher;
pub mod injector;
mod router;
pub(crate) mod spawn;

use crate::feedback::{Dispatch, Source};
use crate::supervise::{Handle, LocalBoxFuture};
use defer::{DeferService, Poll, Register};
use dispatcher::NudgeDispatcher;
use injector::{InjectorService, QueueInject};
use raven_proto::{Action, ExecutionResult, PlannerDecision};
use spawn::ProactiveSpawn;

pub use router::Router;

/// The runner's router over the real executors.
#[derive(Clone)]
pub struct Executors {
    pub dispatcher: NudgeDispatcher,
    pub injector: Handle<InjectorService>,
    pub defer: Handle<DeferService>,
    pub spawn: ProactiveSpawn,
}

impl Router for Executors {
    fn route<'a>(&'a self, d: &'a PlannerDecision, said: &'a Dispatch) -> LocalBoxFuture<'a, ExecutionResult> {
        Box::pin(async move {
            let nudge_id = said.nudge_id.as_str();
            match d.action {
                Action::Skip => ExecutionResult::failed("skip is not routed"),
                Action::Nudge => self.dispatcher.dispatch(d, said).await,
                Action::NudgeInject => {
                    let Some(session) = d.target_session.clone() else {
                        // `validated()` makes an untargeted inject a nudge; one that still
                        // arrives here was never checked and recorded, so it is not sent.
                        return ExecutionResult::failed("an inject needs target_session");
                    };
                    let q = QueueInject {
                        session: session.clone(),
                        nudge_id: nudge_id.to_owned(),
                        message: d.nudge_message.clone().unwrap_or_default(),
                        priority: d.priority,
                        topic: said.topic.clone(),
                    };
                    match self.injector.call_async(q).await {
                        Ok(Ok(_)) => ExecutionResult::delivered(vec![format!("inject:{session}")]),
                        Ok(Err(e)) => ExecutionResult::failed(e.to_string()),
                        Err(e) => ExecutionResult::failed(e.to_string()),
                    }
                }
                Action::NudgeDefer => {
                    match self.defer.call_async(Register { id: nudge_id.to_owned(), decision: d.clone() }).await {
                        Ok(Ok(())) => ExecutionResult::delivered(vec![format!(
                            "defer:{}",
                            d.target_session.as_deref().unwrap_or("*")
                        )]),
                        Ok(Err(e)) => ExecutionResult::failed(e.to_string()),
                        Err(e) => ExecutionResult::failed(e.to_string()),
                    }
                }
                Action::SpawnAgent => self.spawn.dispatch(d, &Dispatch { source: Source::Spawn, ..said.clone() }).await,
            }
        })
    }

    fn due_deferred(&self) -> LocalBoxFuture<'_, Vec<PlannerDecision>> {
        Box::pin(async move {
            match self.defer.call_async(Poll).await {
                Ok(Ok(p)) => p.settled.into_iter().map(|d| d.decision).collect(),
                Ok(Err(e)) => {
                    tracing::error!("deferred nudges not polled: {e}");
                    Vec::new()
                }
                Err(e) => {
                    tracing::error!("deferred nudges not polled: {e}");
                    Vec::new()
                }
            }
        })
    }
}

#[cfg(test)]
mod gate_props_tests;
#[cfg(test)]
mod locks_tests;
#[cfg(test)]
mod spawn_tests;
#[cfg(test)]
mod tests;
