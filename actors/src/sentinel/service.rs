//! The runner as a supervised actor, and its interval loop (default every 1800 s).

use super::runner::{RunnerStats, SentinelRunner};
use super::triggers::TriggerStore;
use crate::clock::SharedClock;
use crate::store::StoreError;
use crate::supervise::{Handle, LocalBoxFuture, Request, Serve, ServeAsync, Service};
use chrono::{DateTime, Utc};
use raven_proto::TickOutcome;
use std::cell::Cell;
use std::rc::Rc;
use tokio::sync::Mutex;

pub struct RunnerService {
    /// Ticks take the lock, so two never overlap even when the interval and a manual
    /// `raven tick` meet.
    runner: Rc<Mutex<SentinelRunner>>,
    triggers: Option<Rc<TriggerStore>>,
}

impl RunnerService {
    pub fn new(runner: SentinelRunner) -> Self {
        RunnerService { runner: Rc::new(Mutex::new(runner)), triggers: None }
    }

    /// Drains `store` on [`DrainTriggers`].
    pub fn with_triggers(mut self, store: TriggerStore) -> Self {
        self.triggers = Some(Rc::new(store));
        self
    }
}

/// Takes the operator's discovery triggers and runs discovery for them; answers how many
/// were taken.
pub struct DrainTriggers;

impl Request for DrainTriggers {
    type Reply = Result<usize, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<DrainTriggers> for RunnerService {
    fn serve_async(&mut self, _: DrainTriggers) -> LocalBoxFuture<'static, Result<usize, StoreError>> {
        let (runner, triggers) = (self.runner.clone(), self.triggers.clone());
        Box::pin(async move {
            let Some(store) = triggers else { return Ok(0) };
            let taken = store.drain()?;
            if taken.is_empty() {
                return Ok(0);
            }
            let reasons: Vec<&str> = taken.iter().map(|t| t.reason.as_str()).collect();
            tracing::info!(?reasons, "discovery requested");
            let mut r = runner.lock().await;
            let now = r.now();
            r.run_triggered_discovery(now).await;
            Ok(taken.len())
        })
    }
}

/// Drains the discovery triggers every `every` until the returned handle is aborted.
pub fn spawn_trigger_loop(runner: Handle<RunnerService>, every: std::time::Duration) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        let mut interval = actix_rt::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if let Ok(Err(e)) = runner.call_async(DrainTriggers).await {
                tracing::error!("discovery triggers not drained: {e}");
            }
        }
    })
}

impl Service for RunnerService {
    fn name(&self) -> &'static str {
        "SentinelRunner"
    }
}

pub struct Tick;

impl Request for Tick {
    type Reply = TickOutcome;
}

impl ServeAsync<Tick> for RunnerService {
    fn serve_async(&mut self, _: Tick) -> LocalBoxFuture<'static, TickOutcome> {
        let runner = self.runner.clone();
        Box::pin(async move { runner.lock().await.tick_once().await })
    }
}

/// One step of the DeferManager loop.
pub struct PollDeferred;

impl Request for PollDeferred {
    type Reply = Vec<TickOutcome>;
}

impl ServeAsync<PollDeferred> for RunnerService {
    fn serve_async(&mut self, _: PollDeferred) -> LocalBoxFuture<'static, Vec<TickOutcome>> {
        let runner = self.runner.clone();
        Box::pin(async move { runner.lock().await.poll_deferred().await })
    }
}

pub struct GetStats;

impl Request for GetStats {
    type Reply = Option<RunnerStats>;
}

impl Serve<GetStats> for RunnerService {
    /// `None` while a tick holds the runner.
    fn serve(&mut self, _: GetStats) -> Option<RunnerStats> {
        self.runner.try_lock().ok().map(|r| r.stats().clone())
    }
}

/// Polls the deferred nudges every `every` until the returned handle is aborted.
pub fn spawn_defer_loop(runner: Handle<RunnerService>, every: std::time::Duration) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        let mut interval = actix_rt::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if let Err(e) = runner.call_async(PollDeferred).await {
                tracing::error!("deferred poll failed: {e}");
            }
        }
    })
}

/// Ticks at once, then every `every()` (asked again after each tick, so a changed
/// `sentinel.interval_s` holds from the next wait) on the current arbiter until the returned
/// handle is aborted, keeping `next` (when it ticks next, for `raven status`). While `every()`
/// is `None` (`sentinel.enabled = false`) it does not tick, and asks again each `off_poll`: a
/// config that turns it on starts it within that.
pub fn spawn_tick_loop(
    runner: Handle<RunnerService>,
    every: impl Fn() -> Option<std::time::Duration> + 'static,
    off_poll: std::time::Duration,
    clock: SharedClock,
    next: Rc<Cell<Option<DateTime<Utc>>>>,
) -> actix_rt::task::JoinHandle<()> {
    actix_rt::spawn(async move {
        loop {
            if every().is_none() {
                next.set(None);
                actix_rt::time::sleep(off_poll).await;
                continue;
            }
            if let Err(e) = runner.call_async(Tick).await {
                tracing::error!("tick failed: {e}");
            }
            let wait = every().unwrap_or(off_poll);
            next.set(chrono::Duration::from_std(wait).ok().map(|d| clock.now() + d));
            actix_rt::time::sleep(wait).await;
        }
    })
}
