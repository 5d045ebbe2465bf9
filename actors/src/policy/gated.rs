//! The read/write split as one function every executor uses: check, dispatch, and only
//! after the dispatch succeeded, record the fire. A denied or failed dispatch charges
//! nothing.

use super::actor::{Check, Nudge, NudgePolicyService, RecordFired};
use crate::supervise::Handle;
use raven_proto::Verdict;
use std::future::Future;

#[derive(Debug)]
pub enum Gated<T, E> {
    Denied(Verdict),
    /// Allowed, but the dispatch failed: no quota was charged.
    Failed(E),
    Delivered(T),
    /// The policy actor could not be asked; nothing was dispatched (fail closed).
    Unavailable(String),
}

pub async fn dispatch_through<T, E, F, Fut>(
    policy: &Handle<NudgePolicyService>,
    nudge: Nudge,
    dispatch: F,
) -> Gated<T, E>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let verdict = match policy.call(Check(nudge.clone())).await {
        Ok(v) => v,
        Err(e) => return Gated::Unavailable(e.to_string()),
    };
    if !verdict.allow {
        return Gated::Denied(verdict);
    }
    match dispatch().await {
        Err(e) => Gated::Failed(e),
        Ok(t) => {
            match policy.call(RecordFired(nudge)).await {
                Ok(Ok(())) => {}
                // Delivered but not charged: logged loudly; the user got the message.
                Ok(Err(e)) => tracing::error!("delivered, but the fire could not be recorded: {e}"),
                Err(e) => {
                    tracing::error!("delivered, but the policy actor did not record the fire: {e}")
                }
            }
            Gated::Delivered(t)
        }
    }
}
