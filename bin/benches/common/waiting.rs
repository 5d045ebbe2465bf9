//! An outbox an earlier version left full (10,000 undeliverable messages waiting, or 1,000
//! dead letters), for the benches that measure what accumulated messages cost.

#![allow(dead_code)] // each bench uses its own part

use chrono::{Duration, Utc};
use raven_actors::delivery::outbox::{DeadLetter, Outbox, OutboxEntry};
use raven_proto::OutboundText;
use std::path::Path;

pub const WAITING: usize = 10_000;

/// 10,000 messages for a webhook nobody listens on, as retries leave them: not due for an
/// hour, dead in six. Written as an earlier version kept them; the supervisor imports them
/// into the state database when it starts.
pub fn fill_outbox(dir: &Path) {
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
    write_outbox(dir, Outbox { entries, dead: Vec::new() });
}

/// `n` dead letters: reminders for the terminal that expired unseen, as an hour of reminders
/// nobody watched leaves them.
pub fn fill_dead(dir: &Path, n: usize) {
    let now = Utc::now();
    let dead = (0..n)
        .map(|i| {
            let at = now - Duration::seconds(3600 - i as i64);
            let text = OutboundText::proactive(
                format!("cron-seed{:02}-{i}", i % 20),
                "cli",
                "local",
                format!("Reminder: job {}", i % 20),
            );
            let entry = OutboxEntry {
                text,
                attempts: 2,
                last_error: "no one is watching the terminal".into(),
                queued_at: at - Duration::seconds(3),
                next_attempt_at: at,
                lease: None,
                fire: None,
                said: None,
                expires_at: Some(at),
            };
            DeadLetter { entry, at, why: "not delivered in time".into() }
        })
        .collect();
    write_outbox(dir, Outbox { entries: Vec::new(), dead });
}

/// As an earlier version kept it: `sentinel/state/outbox.json`, imported at the next start.
fn write_outbox(dir: &Path, outbox: Outbox) {
    let root = serde_json::json!({ "outbox": outbox });
    let path = dir.join("sentinel/state/outbox.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&root).unwrap()).unwrap();
}

/// A webhook outlet nobody listens on, so what waits stays waiting.
pub fn closed_webhook() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    format!("[delivery]\njsonl_path = \"out.jsonl\"\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n")
}
