//! The tick's hooks that plug in from above: task discovery.

use futures_util::future::LocalBoxFuture;

/// The task-discovery hook of the tick (the discovery pipeline plugs in here).
pub trait DiscoveryHook {
    fn maybe_run(&mut self, now: chrono::DateTime<chrono::Utc>) -> LocalBoxFuture<'_, crate::discovery::Discovered>;
    /// An operator asked for a discovery run now (a drained trigger), past the daily guard.
    fn run_now(&mut self, now: chrono::DateTime<chrono::Utc>) -> LocalBoxFuture<'_, crate::discovery::Discovered>;
}
