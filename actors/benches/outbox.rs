//! Bytes the outbox writes per operation, from the process's own `/proc/self/io` (`wchar`:
//! what was handed to write(2), so it counts on a tmpfs too), and the time each takes: queue a
//! message, one retry (lease, then settle as failed), and a refusal buried as a dead letter,
//! each with 1,000 dead letters and 10,000 messages waiting, against the same operation on an
//! empty outbox in the same run (the baseline).

use chrono::{DateTime, Duration, TimeZone, Utc};
use raven_actors::delivery::outbox::{OutboxEntry, OutboxStore, Settled, SqliteOutbox};
use raven_actors::store::db::Database;
use raven_proto::OutboundText;
use std::sync::Arc;
use std::time::Instant;

const ROUNDS: usize = 50;

fn entry(id: &str, content: String, at: DateTime<Utc>) -> OutboxEntry {
    OutboxEntry {
        text: OutboundText::proactive(id, "webhook", "ann", content),
        attempts: 1,
        last_error: "no one is watching the terminal (no REPL attached, stdout not a terminal)".into(),
        queued_at: at,
        next_attempt_at: at,
        lease: None,
        fire: None,
        said: None,
        expires_at: Some(at + Duration::hours(6)),
    }
}

/// What this process has handed to write(2) so far.
fn written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// An outbox in a fresh dir holding `dead` dead letters and `waiting` messages not yet due.
fn outbox(dir: &std::path::Path, dead: usize, waiting: usize, t0: DateTime<Utc>) -> SqliteOutbox {
    let (db, _) = Database::open(&dir.join("state.db")).unwrap();
    let store = SqliteOutbox::open(Arc::new(db), &dir.join("outbox.json")).unwrap();
    for i in 0..dead {
        let text = format!("Reminder: soak job {} {}", i % 20, "x".repeat(200));
        store
            .refuse(entry(&format!("dead-{i}"), text, t0), t0, "not delivered by then (2 attempts)".repeat(4))
            .unwrap();
    }
    for i in 0..waiting {
        let mut e = entry(&format!("later-{i}"), format!("waiting message {i}"), t0);
        e.next_attempt_at = t0 + Duration::days(1);
        store.admit(e, 100_000, t0).unwrap();
    }
    store
}

/// (bytes, microseconds) per round of `op`, median over the rounds.
fn measure(mut op: impl FnMut(usize)) -> (u64, f64) {
    let (mut bytes, mut micros) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let (w, t) = (written(), Instant::now());
        op(i);
        micros.push(t.elapsed().as_secs_f64() * 1e6);
        bytes.push(written() - w);
    }
    bytes.sort_unstable();
    micros.sort_by(f64::total_cmp);
    (bytes[ROUNDS / 2], micros[ROUNDS / 2])
}

/// The three operations on `store`, each measured.
fn operations(store: &SqliteOutbox, t0: DateTime<Utc>) -> [(u64, f64); 3] {
    let queue = measure(|i| store.admit(entry(&format!("q-{i}"), format!("queued {i}"), t0), 100_000, t0).unwrap());
    let mut now = t0;
    let retry = measure(|_| {
        now += Duration::seconds(1);
        let due = store.lease(now, 1, now + Duration::minutes(5)).unwrap().due;
        let tries =
            due.into_iter().map(|e| Settled::Failed(OutboxEntry { next_attempt_at: now, ..e })).take(1).collect();
        store.settle(tries, now).unwrap();
    });
    let bury = measure(|i| {
        let e = entry(&format!("q-{i}"), format!("queued {i}"), t0);
        store.settle(vec![Settled::Refused(e, "the service said no".into())], now).unwrap();
    });
    [queue, retry, bury]
}

fn main() {
    let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    let (empty_dir, full_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let empty = operations(&outbox(empty_dir.path(), 0, 0, t0), t0);
    let full = operations(&outbox(full_dir.path(), 1000, 10_000, t0), t0);
    let names = ["queue a message", "one retry (lease + settle)", "bury a refusal"];
    println!("{:<36} {:>10} {:>10} {:>7} {:>9} {:>9}", "operation", "bytes", "baseline", "ratio", "µs p50", "baseline");
    for ((name, (b, t)), (b0, t0)) in names.iter().zip(full).zip(empty) {
        println!("{name:<36} {b:>10} {b0:>10} {:>6.2}x {t:>9.0} {t0:>9.0}", b as f64 / b0.max(1) as f64);
    }
    println!("(with 1,000 dead letters and 10,000 waiting; baseline: an empty outbox; limit 32 KiB an operation)");
}
