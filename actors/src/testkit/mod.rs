//! Test support, built only for tests and with the `testkit` feature (which the benchmarks
//! and the process tests turn on): doubles (a scripted provider, a terminal a test reads) and
//! small simulations on the manual clock. Nothing of it is in the `raven` binary.

pub mod doubles;
pub mod sim;
