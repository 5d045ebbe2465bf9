//! The Sentinel: the tick loop that decides whether and how to reach the user.

pub(crate) mod decision_cache;
pub mod next_gate;
pub(crate) mod router;
pub(crate) mod runner;
mod service;
mod topics;
pub mod triggers;

pub use crate::executor::Router;
pub use next_gate::{next_gate, NextGate, NextGateError};
pub use router::DiscoveryHook;
pub use runner::{context_signature, RunnerDeps, RunnerStats, SentinelRunner};
pub use service::{
    spawn_defer_loop, spawn_tick_loop, spawn_trigger_loop, DrainTriggers, GetStats, PollDeferred, RunnerService, Tick,
};

#[cfg(test)]
mod brief_tests;
#[cfg(test)]
mod tests;
