//! Small simulations on the manual clock, shared by the tests and the benchmarks.

use crate::clock::ManualClock;
use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::engine::{Engine, Overrides};
use crate::llm::decorator::Counted;
use crate::planner::rules::RulesProvider;
use crate::sentinel::{Router, Tick};
use crate::supervise::LocalBoxFuture;
use chrono::{Duration, TimeZone, Utc};
use raven_proto::{ExecutionResult, PlannerDecision};
use std::rc::Rc;

/// Accepts nothing: for runs where nothing should be delivered.
pub struct NoOutlet;

impl Router for NoOutlet {
    fn route<'a>(
        &'a self,
        _: &'a PlannerDecision,
        _: &'a crate::feedback::Dispatch,
    ) -> LocalBoxFuture<'a, ExecutionResult> {
        Box::pin(async { ExecutionResult::failed("no outlet") })
    }
}

/// Accepts everything and shows it nowhere: for runs that measure the engine, not an outlet.
pub struct Sink;

impl Router for Sink {
    fn route<'a>(
        &'a self,
        _: &'a PlannerDecision,
        _: &'a crate::feedback::Dispatch,
    ) -> LocalBoxFuture<'a, ExecutionResult> {
        Box::pin(async { ExecutionResult::delivered(vec!["sink:bench".into()]) })
    }
}

/// LLM calls made by `ticks` ticks `every` apart from midnight, on an idle data dir (a short
/// MEMORY.md, nothing due, no sessions), with the embedded rules provider and the default
/// config.
pub async fn idle_day_llm_calls(ticks: u32, every: Duration) -> u64 {
    let tmp = tempfile_dir();
    let dir = DataDir::new(&tmp);
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap());
    let (provider, calls) = Counted::new(Rc::new(RulesProvider::new(chrono_tz::Tz::UTC)));
    let overrides =
        Overrides { provider: Some(Rc::new(provider)), router: Some(Rc::new(NoOutlet)), ..Default::default() };
    let engine = Engine::start_with(&dir, &RavenConfig::default(), clock.shared(), overrides).expect("engine");
    std::fs::write(dir.memory(), "# Memory\nLikes tea.\n").expect("memory");
    for _ in 0..ticks {
        let _ = engine.runner.call_async(Tick).await;
        clock.advance(every);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    calls.get()
}

/// A fresh private dir under the system temp dir.
fn tempfile_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let p = std::env::temp_dir().join(format!("raven-sim-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
    let _ = std::fs::remove_dir_all(&p);
    p
}
