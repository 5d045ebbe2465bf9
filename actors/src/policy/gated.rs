//! The read/write split as one function every executor uses: check, record, dispatch, and
//! take the record back when the dispatch failed. A denied or failed dispatch charges
//! nothing; a crash can lose a nudge but never send one twice.

use super::actor::{Check, Nudge, NudgePolicyService, RecordFired, RetractFired};
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
    // Charged before it goes out: a crash between the delivery and a later record would let
    // the next process send it again (found by the SIGKILL fault suite). A nudge is never
    // sent twice; the price is that a crash in that gap loses it.
    let fire = match policy.call(RecordFired(nudge)).await {
        Ok(Ok(fire)) => Some(fire),
        // Sent, but not charged: logged loudly; the user still gets the message.
        Ok(Err(e)) => {
            tracing::error!("the fire could not be recorded; dispatching anyway: {e}");
            None
        }
        Err(e) => {
            tracing::error!("the policy actor did not record the fire; dispatching anyway: {e}");
            None
        }
    };
    match dispatch().await {
        Ok(t) => Gated::Delivered(t),
        Err(e) => {
            // A failed dispatch charges nothing.
            if let Some(fire) = fire {
                match policy.call(RetractFired(fire)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(why)) => tracing::error!("a failed dispatch stayed charged: {why}"),
                    Err(why) => tracing::error!("a failed dispatch stayed charged: {why}"),
                }
            }
            Gated::Failed(e)
        }
    }
}
