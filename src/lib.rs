//! Raven facade: one import path for the typed messages and the engine.
//! The end-to-end tests in `tests/` start the real `raven` binary from `bin/`.
pub use raven_actors as actors;
pub use raven_proto as proto;
