//! Gateway POST latency with 10,000 undeliverable messages waiting in the outbox, next to the
//! same POSTs with an empty outbox in the same run: a user's turn must not pay for what
//! waits (the outbox is its own table, read by nobody on that path).

#[path = "../tests/e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;

use chrono::{Duration, Utc};
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outbox::{Outbox, OutboxEntry};
use raven_proto::OutboundText;
use std::path::Path;
use std::time::Instant;

const SECRET: &str = "bench-secret";
const POSTS: usize = 200;
const WAITING: usize = 10_000;

/// A jsonl outlet for the replies, and a webhook nobody listens on.
fn config() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    format!("[delivery]\njsonl_path = \"out.jsonl\"\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n")
}

/// 10,000 messages for a webhook nobody listens on, as retries leave them: not due for an
/// hour, dead in six. Written as an earlier version kept them; the supervisor imports them
/// into the state database when it starts.
fn fill_outbox(dir: &Path) {
    let now = Utc::now();
    let entries = (0..WAITING)
        .map(|i| OutboxEntry {
            text: OutboundText::proactive(format!("bench-{i}"), "webhook", "far", format!("waiting message {i}")),
            attempts: 3,
            last_error: "connection refused".into(),
            queued_at: now,
            next_attempt_at: now + Duration::hours(1),
            lease: None,
            fire: None,
            said: None,
            expires_at: Some(now + Duration::hours(6)),
        })
        .collect();
    let outbox = Outbox { entries, dead: Vec::new() };
    let root = serde_json::json!({ "outbox": outbox });
    let path = dir.join("sentinel/state/outbox.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&root).unwrap()).unwrap();
}

/// p50 of POST /inbound on a running supervisor, after a warm-up.
fn post_p50(dir: &Path) -> f64 {
    let _up = support::Killed(support::up(dir, &config(), &[("RAVEN_GATEWAY_SECRET", SECRET)]));
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
