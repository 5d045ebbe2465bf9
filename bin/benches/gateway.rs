//! Gateway POST latency with 10,000 undeliverable messages waiting in the outbox, next to the
//! same POSTs with an empty outbox in the same run: a user's turn must not pay for what
//! waits (the outbox is its own table, read by nobody on that path).

#[path = "../tests/e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;

#[path = "common/waiting.rs"]
mod waiting;

use raven_actors::data_dir::DataDir;
use std::path::Path;
use std::time::Instant;
use waiting::{closed_webhook, fill_outbox, WAITING};

const SECRET: &str = "bench-secret";
const POSTS: usize = 200;

/// p50 of POST /inbound on a running supervisor, after a warm-up.
fn post_p50(dir: &Path) -> f64 {
    let _up = support::Killed(support::up(dir, &closed_webhook(), &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    let (addr, _) = support::gateway(dir);
    let body = br#"{"channel": "jsonl", "chat_id": "ann", "text": "hello there"}"#;
    let mut times = Vec::new();
    for i in 0..POSTS + 20 {
        let t = Instant::now();
        let (code, answer) = support::http(&addr, "POST", "/inbound", Some(SECRET), body);
        assert_eq!(code, 200, "{answer}");
        if i >= 20 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let empty = tempfile::tempdir().unwrap();
    let full = tempfile::tempdir().unwrap();
    fill_outbox(full.path());
    let base = post_p50(empty.path());
    let loaded = post_p50(full.path());
    let (still, _) = raven_actors::delivery::outbox::peek_in(&DataDir::new(full.path())).unwrap();
    assert!(still.entries.len() >= WAITING, "the messages still wait");
    println!("{:<52} {:>10}", "benchmark", "figure");
    println!("{:<52} {:>7.3} ms", "gateway POST /inbound p50, 10,000 waiting in the outbox", loaded);
    println!("{:<52} {:>7.3} ms", "baseline: the same POSTs, empty outbox", base);
    println!("{:<52} {:>10.2}", "ratio", loaded / base);
    println!("target: ratio <= 2");
}
