//! `[delivery]`, `[executor]` and `[gateway]`: where messages go and how they get there.

use serde::{Deserialize, Serialize};

/// Channel outlets of the DeliveryHub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeliveryConfig {
    /// Where an untargeted nudge goes, as `channel:chat_id`.
    pub default_targets: Vec<String>,
    /// The `jsonl` outlet's file, relative to the data dir; empty: no jsonl outlet.
    pub jsonl_path: String,
    /// The `webhook` outlet's URL; empty: no webhook outlet.
    pub webhook_url: String,
    /// Environment variable holding the shared secret sent as `x-raven-secret`.
    pub webhook_secret_env: String,
    pub webhook_attempts: u32,
    pub webhook_backoff_ms: u64,
    pub webhook_timeout_s: u64,
    /// First retry of an outbox entry after this long, doubling up to an hour.
    pub outbox_backoff_s: i64,
    /// A Sentinel message not delivered within this many hours becomes a dead letter.
    pub outbox_ttl_nudge_h: i64,
    /// At most this many messages wait in the outbox; past it the oldest becomes a dead letter.
    pub outbox_max: usize,
    /// A message for `cli` counts as delivered even when no one watches the terminal (no REPL
    /// attached, stdout not a terminal). Off: it goes to the first enabled channel instead, or
    /// waits in the outbox.
    pub cli_always: bool,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            default_targets: vec!["cli:local".into()],
            jsonl_path: String::new(),
            webhook_url: String::new(),
            webhook_secret_env: "RAVEN_WEBHOOK_SECRET".into(),
            webhook_attempts: 3,
            webhook_backoff_ms: 200,
            webhook_timeout_s: 10,
            outbox_backoff_s: 30,
            outbox_ttl_nudge_h: 6,
            outbox_max: 10_000,
            cli_always: false,
        }
    }
}

/// The NudgeInjector and the DeferManager.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutorConfig {
    pub inject_ttl_minutes: i64,
    /// Pending injects kept per session; the oldest is evicted beyond it.
    pub inject_cap: usize,
    /// A session has settled when idle this long.
    pub defer_idle_minutes: i64,
    /// A deferred nudge expires after waiting this long.
    pub defer_max_wait_minutes: i64,
    pub defer_poll_s: u64,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            inject_ttl_minutes: 120,
            inject_cap: 3,
            defer_idle_minutes: 10,
            defer_max_wait_minutes: 240,
            defer_poll_s: 60,
        }
    }
}

/// `raven gateway`: the HTTP side, spawned and restarted by `raven up`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    /// Spawn the gateway from `raven up`.
    pub enabled: bool,
    /// Address to listen on; port 0 picks a free one (written to `gateway.addr` in the data dir).
    pub listen: String,
    /// Environment variable holding the shared secret `POST /inbound` requires.
    pub secret_env: String,
    pub max_body_bytes: usize,
    /// The first wait before a dead gateway is started again (doubling to 5 s while it keeps
    /// dying young).
    pub restart_backoff_ms: u64,
    /// A gateway whose supervisor is gone keeps serving (the restarted supervisor adopts it)
    /// for this long, then exits.
    pub orphan_timeout_s: u64,
    /// `GET /metrics` without the secret (for a scraper that cannot send it); off by default.
    pub metrics_public: bool,
    /// Connections open at once; past it a new one is closed at once.
    pub max_connections: usize,
    /// A request head (or the next one on a kept-alive connection) must arrive within this.
    pub header_timeout_s: u64,
    /// A request body must arrive within this of its head.
    pub body_timeout_s: u64,
    /// The address the user's phone reaches this gateway at (`https://raven.example.org`):
    /// the base of the signed feedback links in push notifications. Empty: no such buttons.
    pub public_url: String,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            enabled: true,
            listen: "127.0.0.1:8787".into(),
            secret_env: "RAVEN_GATEWAY_SECRET".into(),
            max_body_bytes: 64 * 1024,
            restart_backoff_ms: 200,
            orphan_timeout_s: 60,
            metrics_public: false,
            max_connections: 256,
            header_timeout_s: 5,
            body_timeout_s: 10,
            public_url: String::new(),
        }
    }
}
