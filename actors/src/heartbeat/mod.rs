//! The Heartbeat (spec §11): a timer-driven review of HEARTBEAT.md that runs the agent only
//! when the file holds active tasks, woken early by events (a cron or subagent completion, a
//! manual `raven wake`) instead of waiting out its interval. The wake drives the heartbeat
//! only: the SentinelRunner keeps its own tick loop.

pub use crate::planner::heartbeat as decision;
mod service;
pub(crate) mod wake;

pub use crate::config::HeartbeatConfig;
pub use decision::Decision;
pub use service::{
    spawn_heartbeat_loop, turn_content, HeartbeatDeps, HeartbeatOutcome, HeartbeatService, HeartbeatTick, IntervalTick,
    NextHeartbeat, RequestWake, CONVERSATION,
};
pub use wake::{WakeHandle, WakeScheduler};

#[cfg(test)]
mod tests;
