//! The gate: NudgePolicy (pure `check()`), its ledger, the adaptive multiplier, the
//! tighten-only overrides and the supervised actor that owns it.

mod actor;
pub(crate) mod adaptive;
mod gate;
mod gated;
pub(crate) mod ledger;
pub(crate) mod overrides;
pub mod topic;

pub use actor::{
    ledger_in, ApplyTuning, Check, LedgerKeeper, Nudge, NudgePolicyService, RecordCronFire, Reservation, Reserve,
    RetractFired, SetBase, SetOverrides, Snapshot, SnapshotReply,
};
pub use adaptive::Tuning;
pub use gate::{apply_tuning, fire_record, CheckRequest, NudgePolicy, Trace};
pub use gated::{dispatch_through, release, Gated};
pub use ledger::{FireKind, FireRecord, PolicyState};
pub use overrides::PolicyOverrides;

#[cfg(test)]
mod concurrency_tests;
#[cfg(test)]
mod locks_tests;
#[cfg(test)]
mod reload_tests;
#[cfg(test)]
mod tests;
