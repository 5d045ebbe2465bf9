//! raven-actors: the actors, the stores and the engine wiring. One folder per subsystem,
//! named as in the spec, over the ground floor of `raven-core` (re-exported here under the same
//! names, so `crate::clock` and `raven_actors::clock` read as before).

pub use raven_core::{clock, config, data_dir, ipc, journal, llm, store, supervise, text, time, watch};

pub mod agent;
#[cfg(test)]
mod architecture_tests;
pub mod channels;
pub mod context;
pub mod cron;
pub mod delivery;
pub mod discovery;
pub mod engine;
pub mod executor;
pub mod feedback;
pub mod gateway;
pub mod heartbeat;
pub mod planner;
pub mod policy;
pub mod process;
pub mod sentinel;
pub mod sessions;
pub mod simulate;
pub mod spine;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
