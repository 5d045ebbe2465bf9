//! raven-core: the ground floor every subsystem stands on. Time and its parser, terminal-safe
//! text, the data dir's layout, files, locks and the state database, config.toml, the decision
//! journal, supervised and metered actors, the control socket, file watchers, and the model
//! provider with its decorators. It imports nothing of Raven's but `raven-proto`, so the
//! compiler keeps every subsystem above it.

pub mod clock;
pub mod config;
pub mod data_dir;
pub mod ipc;
pub mod journal;
pub mod llm;
pub mod store;
pub mod supervise;
pub mod text;
pub mod time;
pub mod watch;
