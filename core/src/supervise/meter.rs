//! Per-actor metrics: messages received, handled, failed, current mailbox depth, handling
//! time and restarts. Lock-free counters, read by `raven status` and `raven metrics`; the
//! handling times also fill a histogram per actor.

use super::counters::Counters;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Handling-time buckets: 10 µs to about 10 s, ×4 each.
fn handling_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1e-5, 4.0, 11))
}

/// The handling-time histograms, one per actor.
pub(super) type Handling = Family<Vec<(String, String)>, Histogram, fn() -> Histogram>;

#[derive(Debug)]
pub struct Meter {
    name: String,
    received: AtomicU64,
    started: AtomicU64,
    handled: AtomicU64,
    failed: AtomicU64,
    restarts: AtomicU64,
    handle_ns_total: AtomicU64,
    handle_ns_max: AtomicU64,
    crash_loop: AtomicBool,
    handling: Histogram,
}

impl Meter {
    fn with_histogram(name: String, handling: Histogram) -> Self {
        Meter {
            name,
            received: AtomicU64::new(0),
            started: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            handle_ns_total: AtomicU64::new(0),
            handle_ns_max: AtomicU64::new(0),
            crash_loop: AtomicBool::new(false),
            handling,
        }
    }

    pub fn on_send(&self) {
        self.received.fetch_add(1, Relaxed);
    }

    /// A message that never reached the mailbox (closed, full) leaves the depth count.
    pub(crate) fn on_send_failed(&self) {
        self.started.fetch_add(1, Relaxed);
        self.failed.fetch_add(1, Relaxed);
    }

    /// Messages taken out of the mailbox so far, this one included.
    pub fn started_count(&self) -> u64 {
        self.started.load(Relaxed)
    }

    pub fn on_start(&self) {
        self.started.fetch_add(1, Relaxed);
    }

    pub fn on_done(&self, ok: bool, ns: u64) {
        if ok {
            self.handled.fetch_add(1, Relaxed);
        } else {
            self.failed.fetch_add(1, Relaxed);
        }
        self.handle_ns_total.fetch_add(ns, Relaxed);
        self.handle_ns_max.fetch_max(ns, Relaxed);
        self.handling.observe(ns as f64 / 1e9);
    }

    pub(crate) fn on_restart(&self) {
        self.restarts.fetch_add(1, Relaxed);
    }

    pub(crate) fn set_crash_loop(&self, on: bool) {
        self.crash_loop.store(on, Relaxed);
    }

    pub fn crash_looping(&self) -> bool {
        self.crash_loop.load(Relaxed)
    }

    pub fn snapshot(&self) -> MeterSnapshot {
        let received = self.received.load(Relaxed);
        let started = self.started.load(Relaxed);
        let handled = self.handled.load(Relaxed);
        let failed = self.failed.load(Relaxed);
        let done = handled + failed;
        MeterSnapshot {
            name: self.name.clone(),
            received,
            handled,
            failed,
            mailbox_depth: received.saturating_sub(started),
            restarts: self.restarts.load(Relaxed),
            mean_handle_us: if done == 0 {
                0.0
            } else {
                self.handle_ns_total.load(Relaxed) as f64 / done as f64 / 1000.0
            },
            max_handle_us: self.handle_ns_max.load(Relaxed) as f64 / 1000.0,
            crash_loop: self.crash_looping(),
        }
    }
}

pub use raven_proto::control::MeterSnapshot;

/// Every meter of the engine, in start order, their handling-time histograms, and the
/// engine's event counters.
#[derive(Debug, Clone)]
pub struct Metrics {
    meters: Arc<Mutex<Vec<Arc<Meter>>>>,
    handling: Handling,
    counters: Counters,
}

impl Default for Metrics {
    fn default() -> Self {
        let handling = Handling::new_with_constructor(handling_histogram as fn() -> Histogram);
        Metrics { meters: Arc::default(), handling, counters: Counters::default() }
    }
}

impl Metrics {
    pub fn register(&self, name: &str) -> Arc<Meter> {
        let histogram = self.handling.get_or_create(&vec![("actor".to_owned(), name.to_owned())]).clone();
        let meter = Arc::new(Meter::with_histogram(name.to_owned(), histogram));
        self.meters.lock().unwrap_or_else(|p| p.into_inner()).push(meter.clone());
        meter
    }

    pub fn snapshot(&self) -> Vec<MeterSnapshot> {
        let meters = self.meters.lock().unwrap_or_else(|p| p.into_inner());
        meters.iter().map(|m| m.snapshot()).collect()
    }

    /// The event counters the journal and the provider feed.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub(super) fn handling(&self) -> &Handling {
        &self.handling
    }
}

/// The table `raven status` prints.
pub fn render_table(rows: &[MeterSnapshot]) -> String {
    let mut out = format!(
        "{:<20} {:>9} {:>9} {:>7} {:>6} {:>8} {:>10} {:>10}  {}\n",
        "actor", "received", "handled", "failed", "depth", "restarts", "mean_us", "max_us", "state"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<20} {:>9} {:>9} {:>7} {:>6} {:>8} {:>10.1} {:>10.1}  {}\n",
            r.name,
            r.received,
            r.handled,
            r.failed,
            r.mailbox_depth,
            r.restarts,
            r.mean_handle_us,
            r.max_handle_us,
            if r.crash_loop { "CRASH-LOOP" } else { "ok" }
        ));
    }
    out
}
