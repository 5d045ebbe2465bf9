//! Test support, built only for tests and with the `testkit` feature (which the benchmarks
//! and the process tests turn on): small simulations on the manual clock, and for the unit
//! tests doubles (a scripted provider, a terminal a test reads). Nothing of it is in the
//! `raven` binary.

#[cfg(test)]
pub(crate) mod doubles;
#[cfg(test)]
pub(crate) mod peer;
pub mod sim;
