//! `raven metrics` and the gateway's `GET /metrics`: every metric of the engine in the
//! OpenMetrics text format, encoded by `prometheus-client`. The actor meters are read off
//! their snapshots at each render; the handling-time histograms and the event counters are
//! registered as they are.

use super::meter::{MeterSnapshot, Metrics};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// The outbox state the gauges show: messages waiting and dead letters kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutboxLevels {
    pub depth: u64,
    pub dead_letters: u64,
}

type ActorLabel = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// An actor meter read off the snapshots: name, help, kind, and the value.
struct ActorSeries {
    name: &'static str,
    help: &'static str,
    counter: bool,
    value: fn(&MeterSnapshot) -> f64,
}

const ACTOR_SERIES: [ActorSeries; 6] = [
    ActorSeries {
        name: "raven_actor_messages_received",
        help: "Messages sent to the actor",
        counter: true,
        value: |r| r.received as f64,
    },
    ActorSeries {
        name: "raven_actor_messages_handled",
        help: "Messages handled successfully",
        counter: true,
        value: |r| r.handled as f64,
    },
    ActorSeries {
        name: "raven_actor_messages_failed",
        help: "Messages whose handling failed",
        counter: true,
        value: |r| r.failed as f64,
    },
    ActorSeries {
        name: "raven_actor_restarts",
        help: "Restarts by the supervisor",
        counter: true,
        value: |r| r.restarts as f64,
    },
    ActorSeries {
        name: "raven_actor_mailbox_depth",
        help: "Messages waiting in the mailbox",
        counter: false,
        value: |r| r.mailbox_depth as f64,
    },
    ActorSeries {
        name: "raven_actor_crash_loop",
        help: "1 when the actor gave up restarting",
        counter: false,
        value: |r| f64::from(u8::from(r.crash_loop)),
    },
];

fn actor(r: &MeterSnapshot) -> ActorLabel {
    vec![("actor".to_owned(), r.name.clone())]
}

/// Every metric of the engine, as text (`outbox`: `None` when the outbox could not be read).
pub fn render_prometheus(metrics: &Metrics, outbox: Option<OutboxLevels>) -> String {
    let rows = metrics.snapshot();
    let mut registry = Registry::default();
    register_actor_series(&mut registry, &rows);
    register_handling(&mut registry, metrics, &rows);
    metrics.counters().register(&mut registry);
    register_outbox(&mut registry, outbox);
    register_file_replaces(&mut registry);
    let mut out = String::new();
    // Writing into a String does not fail.
    let _ = encode(&mut out, &registry);
    out
}

fn register_actor_series(registry: &mut Registry, rows: &[MeterSnapshot]) {
    for s in &ACTOR_SERIES {
        if s.counter {
            let family = Family::<ActorLabel, Counter>::default();
            rows.iter().for_each(|r| {
                family.get_or_create(&actor(r)).inc_by((s.value)(r) as u64);
            });
            registry.register(s.name, s.help, family);
        } else {
            let family = Family::<ActorLabel, FloatGauge>::default();
            rows.iter().for_each(|r| {
                family.get_or_create(&actor(r)).set((s.value)(r));
            });
            registry.register(s.name, s.help, family);
        }
    }
}

/// The histogram (`_bucket`, `_sum`, `_count`) and the longest handling seen.
fn register_handling(registry: &mut Registry, metrics: &Metrics, rows: &[MeterSnapshot]) {
    registry.register("raven_actor_handling_seconds", "Time to handle one message", metrics.handling().clone());
    let max = Family::<ActorLabel, FloatGauge>::default();
    rows.iter().for_each(|r| {
        max.get_or_create(&actor(r)).set(r.max_handle_us / 1e6);
    });
    registry.register("raven_actor_handling_seconds_max", "Longest time to handle one message", max);
}

fn register_outbox(registry: &mut Registry, outbox: Option<OutboxLevels>) {
    let (depth, dead) = (Gauge::<i64>::default(), Gauge::<i64>::default());
    if let Some(o) = outbox {
        depth.set(i64::try_from(o.depth).unwrap_or(i64::MAX));
        dead.set(i64::try_from(o.dead_letters).unwrap_or(i64::MAX));
    }
    registry.register("raven_outbox_depth", "Messages waiting in the outbox", depth);
    registry.register("raven_outbox_dead_letters", "Dead letters kept in the outbox", dead);
}

fn register_file_replaces(registry: &mut Registry) {
    let replaces = Counter::<u64>::default();
    replaces.inc_by(crate::store::replaces_on_this_thread());
    registry.register("raven_file_replaces", "Durable file replaces made on the engine's thread", replaces);
}
