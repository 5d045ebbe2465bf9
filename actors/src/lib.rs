//! raven-actors: the actors, the stores and the engine wiring. One folder per subsystem,
//! named as in the spec.

pub mod agent;
#[cfg(test)]
mod architecture_tests;
pub mod channels;
pub mod clock;
pub mod config;
pub mod context;
pub mod cron;
pub mod data_dir;
pub mod delivery;
pub mod discovery;
pub mod engine;
pub mod executor;
pub mod feedback;
pub mod gateway;
pub mod heartbeat;
pub mod ipc;
pub mod journal;
pub mod llm;
pub mod planner;
pub mod policy;
pub mod process;
pub mod sentinel;
pub mod sessions;
pub mod simulate;
pub mod spine;
pub mod store;
pub mod supervise;
#[cfg(test)]
pub(crate) mod testing;
pub mod text;
pub mod time;
pub mod watch;
