//! The control socket's protocol: a client (the REPL, the gateway, `raven status`) sends
//! numbered requests; the supervisor answers each by number and may push events between.

use serde::{Deserialize, Serialize};

/// One actor's mailbox metrics, as `raven status` shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeterSnapshot {
    pub name: String,
    pub received: u64,
    pub handled: u64,
    pub failed: u64,
    pub mailbox_depth: u64,
    pub restarts: u64,
    pub mean_handle_us: f64,
    pub max_handle_us: f64,
    pub crash_loop: bool,
}

/// When one timer fires next; `at` is RFC 3339, `None` when nothing is scheduled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upcoming {
    pub what: String,
    pub at: Option<String>,
}

/// The LLM provider's breaker, for `raven status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmHealth {
    /// The provider's name and its model.
    pub provider: String,
    pub model: String,
    /// `closed` (called as usual), `open` (marked down: not called until `open_until`) or
    /// `half_open` (the next call is the probe).
    pub state: String,
    /// Failed requests in a row, and how many open the breaker.
    pub failures: u32,
    pub threshold: u32,
    /// RFC 3339, while open.
    pub open_until: Option<String>,
    /// Times it opened since the process started.
    pub opened: u64,
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ControlRequest {
    Ping,
    Status,
    /// Prometheus text format of every actor's metrics.
    Metrics,
    /// A user's message from a channel: answers a pending question, injects into a running
    /// turn, or starts one; the reply comes back in the response, and with `deliver` it also
    /// goes out through the channel's outlet.
    Inbound {
        turn: crate::TurnRequest,
        deliver: bool,
    },
    /// Run one Sentinel tick now.
    Tick,
    /// Wake the heartbeat early (coalesced with other wakes, spaced by the rate guard).
    Wake {
        reason: String,
    },
    /// Deliver `text` to `target` (`channel:chat_id`) through the DeliveryHub.
    Send {
        target: String,
        text: String,
    },
    /// The gateway takes over delivery for these channels: the supervisor pushes it
    /// `ServerFrame::Deliver` and it answers each with `Delivered`.
    HostOutlets {
        channels: Vec<String>,
    },
    /// The outcome of a `ServerFrame::Deliver`: `error` is `None` when delivered; a
    /// `transient` error is retried from the outbox, another one is dropped.
    Delivered {
        id: u64,
        error: Option<String>,
        transient: bool,
    },
    /// Push this connection the supervisor's events (its `cli` messages) from now on.
    Subscribe,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ControlResponse {
    Pong {
        pid: u32,
    },
    Status {
        pid: u32,
        actors: Vec<MeterSnapshot>,
        /// The timers' next fires (the Sentinel tick, cron, heartbeat).
        upcoming: Vec<Upcoming>,
        /// The LLM provider's breaker (`None` with the embedded rules provider).
        llm: Option<LlmHealth>,
    },
    Metrics {
        text: String,
    },
    /// The turn's reply; `None` when the message answered a question or joined a running turn.
    Reply {
        text: Option<String>,
    },
    /// The turn was answered without doing anything (a command's input it could not take);
    /// the text says why.
    Refused {
        text: String,
    },
    Error {
        message: String,
    },
    /// Events follow as `ServerFrame::Event`.
    Subscribed,
    /// The gateway now hosts the channels it named.
    Hosting,
    /// Taken.
    Ack,
    /// What became of a `Send`: delivered, or kept in the outbox / dropped, with why.
    Sent {
        delivered: bool,
        detail: String,
    },
    /// What a tick did, and the proactive messages it delivered to `cli` targets (so an
    /// attached REPL shows them).
    Ticked {
        route: String,
        cli_messages: Vec<String>,
        /// The decision and its result, as `TickOutcome::describe` says them.
        detail: Vec<String>,
    },
}

/// Client → server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFrame {
    pub id: u64,
    pub request: ControlRequest,
}

/// Server → client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerFrame {
    Response {
        id: u64,
        response: ControlResponse,
    },
    /// Pushed without a request (a proactive message for the REPL, say).
    Event {
        text: String,
    },
    /// To a gateway hosting the channel: deliver this, then answer `Delivered { id }`.
    Deliver {
        id: u64,
        text: crate::OutboundText,
    },
}
