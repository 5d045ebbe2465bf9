//! Per-actor metrics: messages received, handled, failed, current mailbox depth, handling
//! time and restarts. Lock-free counters, read by `raven status` and `raven metrics`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
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
}

impl Meter {
    pub fn new(name: impl Into<String>) -> Self {
        Meter { name: name.into(), ..Meter::default() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn on_send(&self) {
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

    pub(crate) fn on_start(&self) {
        self.started.fetch_add(1, Relaxed);
    }

    pub(crate) fn on_done(&self, ok: bool, ns: u64) {
        if ok {
            self.handled.fetch_add(1, Relaxed);
        } else {
            self.failed.fetch_add(1, Relaxed);
        }
        self.handle_ns_total.fetch_add(ns, Relaxed);
        self.handle_ns_max.fetch_max(ns, Relaxed);
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

/// Every meter of the engine, in start order.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    meters: Arc<Mutex<Vec<Arc<Meter>>>>,
}

impl Metrics {
    pub fn register(&self, name: &str) -> Arc<Meter> {
        let meter = Arc::new(Meter::new(name));
        self.meters.lock().unwrap_or_else(|p| p.into_inner()).push(meter.clone());
        meter
    }

    pub fn snapshot(&self) -> Vec<MeterSnapshot> {
        let meters = self.meters.lock().unwrap_or_else(|p| p.into_inner());
        meters.iter().map(|m| m.snapshot()).collect()
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

/// A metric family: name, type, help, and how to read it off a snapshot.
type Series = (&'static str, &'static str, &'static str, fn(&MeterSnapshot) -> f64);

/// Prometheus text exposition format (version 0.0.4).
pub fn render_prometheus(rows: &[MeterSnapshot]) -> String {
    let series: [Series; 7] = [
        ("raven_actor_messages_received_total", "counter", "Messages sent to the actor.", |r| r.received as f64),
        ("raven_actor_messages_handled_total", "counter", "Messages handled successfully.", |r| r.handled as f64),
        ("raven_actor_messages_failed_total", "counter", "Messages whose handling failed.", |r| r.failed as f64),
        ("raven_actor_mailbox_depth", "gauge", "Messages waiting in the mailbox.", |r| r.mailbox_depth as f64),
        ("raven_actor_restarts_total", "counter", "Restarts by the supervisor.", |r| r.restarts as f64),
        ("raven_actor_handle_seconds_mean", "gauge", "Mean handling time.", |r| r.mean_handle_us / 1e6),
        ("raven_actor_crash_loop", "gauge", "1 when the actor gave up restarting.", |r| {
            f64::from(u8::from(r.crash_loop))
        }),
    ];
    let mut out = String::new();
    for (name, kind, help, value) in series {
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        for r in rows {
            out.push_str(&format!("{name}{{actor=\"{}\"}} {}\n", r.name, value(r)));
        }
    }
    let replaces = crate::store::replaces_on_this_thread();
    out.push_str(&format!(
        "# HELP raven_file_replaces_total Durable file replaces made on the engine's thread.\n\
         # TYPE raven_file_replaces_total counter\nraven_file_replaces_total {replaces}\n"
    ));
    out
}
