//! 10,000 undeliverable messages in the outbox, for the benches that measure what waiting
//! messages cost.

use chrono::{Duration, Utc};
use raven_actors::delivery::outbox::{Outbox, OutboxEntry};
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
    let outbox = Outbox { entries, dead: Vec::new() };
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
