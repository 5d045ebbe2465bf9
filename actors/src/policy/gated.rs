//! The one way every executor sends: reserve (check and record in one step), dispatch, and
//! give the reservation back when the dispatch failed. A denied or failed dispatch charges
//! nothing; a crash can lose a nudge but never send one twice.

use super::actor::{Nudge, NudgePolicyService, Reservation, Reserve, RetractFired};
use super::FireRecord;
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
    // Checked and charged in one step under the ledger's lock, before it goes out: two
    // dispatchers can never both take the last slot, and a crash between the delivery and a
    // later record can never let the next process send it again. The price is that a crash
    // in that gap loses the nudge.
    let fire = match policy.call_async(Reserve(nudge)).await {
        Ok(Ok(Reservation::Held(_, fire))) => fire,
        Ok(Ok(Reservation::Denied(verdict))) => return Gated::Denied(verdict),
        // Not charged means not sent: an unrecorded nudge could pass the caps.
        Ok(Err(e)) => return Gated::Unavailable(format!("the ledger could not be written: {e}")),
        Err(e) => return Gated::Unavailable(e.to_string()),
    };
    match dispatch().await {
        Ok(t) => Gated::Delivered(t),
        Err(e) => {
            // A failed dispatch charges nothing.
            release(policy, fire).await;
            Gated::Failed(e)
        }
    }
}

/// Gives back the reservation of a dispatch that failed (it charges nothing).
pub async fn release(policy: &Handle<NudgePolicyService>, fire: FireRecord) {
    match policy.call_async(RetractFired(fire)).await {
        Ok(Ok(())) => {}
        Ok(Err(why)) => tracing::error!("a failed dispatch stayed charged: {why}"),
        Err(why) => tracing::error!("a failed dispatch stayed charged: {why}"),
    }
}
