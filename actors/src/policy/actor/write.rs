//! The gate's writes, off the actor's thread: each is one atomic read-modify-write of the
//! ledger, run on a blocking thread and awaited, so a peer process holding the state database
//! (for up to its 5 s busy timeout) stalls no actor, lane or socket of this one. The gate this
//! process knows adopts the merged ledger when the write lands.

use super::{Known, NudgePolicyService};
use crate::policy::{NudgePolicy, PolicyState};
use crate::store::db::off_thread;
use crate::store::{keeper, StoreError};
use crate::supervise::LocalBoxFuture;
use std::rc::Rc;

impl NudgePolicyService {
    /// Runs `change` on the ledger as it is kept now, with a copy of the gate this process
    /// knows (for its config and its learned state), and keeps the result. Without a store the
    /// change applies in memory only, at once.
    pub(super) fn write<R: Send + 'static>(
        &self,
        change: impl FnOnce(&mut NudgePolicy, &mut PolicyState) -> R + Send + 'static,
    ) -> LocalBoxFuture<'static, Result<R, StoreError>> {
        let Some(store) = self.store.clone() else {
            let mut policy = self.gate.policy.borrow_mut();
            let mut state = policy.state().clone();
            let out = change(&mut policy, &mut state);
            policy.replace_state(state);
            return Box::pin(std::future::ready(Ok(out)));
        };
        let mut gate = self.gate.policy.borrow().clone();
        let known = Rc::clone(&self.gate);
        Box::pin(async move {
            let (out, state, stamp) = off_thread(move || {
                let (out, state) = keeper::change(store.as_ref(), |ledger: &mut PolicyState| {
                    let out = change(&mut gate, ledger);
                    (out, ledger.clone())
                })?;
                Ok::<_, StoreError>((out, state, store.stamp()))
            })
            .await?;
            adopt(&known, state, stamp);
            Ok(out)
        })
    }
}

/// The ledger a write left, and its version, become what this process knows.
fn adopt(known: &Known, state: PolicyState, stamp: Option<crate::store::Stamp>) {
    known.policy.borrow_mut().replace_state(state);
    known.seen.set(stamp);
}
