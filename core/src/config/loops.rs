//! The loops' sections: `[sentinel]`, `[discovery]`, `[cron]`, `[agent]` and `[supervise]`.

use serde::{Deserialize, Serialize};

/// The longest interval a job may have: a hundred years (a longer one is set aside, never fired).
pub const MAX_EVERY_S: u64 = 100 * 365 * 24 * 3600 + 25 * 24 * 3600;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SentinelConfig {
    /// Off by default (spec: opt in to activate).
    pub enabled: bool,
    /// Seconds between ticks (spec §2 default: 1800).
    pub interval_s: u64,
    /// An unchanged-context skip is trusted this long; then the Planner is asked again, so
    /// a quiet persona cannot lock skip forever.
    pub skip_cache_ttl_s: u64,
    /// How long a plan slot stays open after its time (one tick interval by default).
    pub slot_window_s: u64,
    /// How often the operator's discovery triggers (`triggers.json`) are drained.
    pub trigger_poll_s: u64,
}

impl Default for SentinelConfig {
    fn default() -> Self {
        SentinelConfig {
            enabled: false,
            interval_s: 1800,
            skip_cache_ttl_s: 4 * 3600,
            slot_window_s: 1800,
            trigger_poll_s: 5,
        }
    }
}

/// Task discovery (spec §12): a daily menu of tasks to pick from. It runs from the Sentinel's
/// tick, so it lives and sleeps with `sentinel.enabled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoveryConfig {
    pub enabled: bool,
    /// The local hour from which the day's menu may go out (once a day).
    pub hour: u32,
    /// How long a menu takes picks.
    pub menu_ttl_minutes: i64,
    pub max_options: usize,
    /// The LLM pick classifier's confidence needed for free text to count as a pick.
    pub classifier_threshold: f64,
    /// `channel:chat_id` the menu goes to; empty: the first of `delivery.default_targets`.
    pub target: String,
    /// The days a menu may go out (`["Mon", ...]`); empty: every day. Weekdays by default.
    pub days: Vec<chrono::Weekday>,
}

impl Default for DiscoveryConfig {
    fn default() -> Self {
        DiscoveryConfig {
            enabled: true,
            hour: 9,
            menu_ttl_minutes: 240,
            max_options: 3,
            classifier_threshold: 0.8,
            target: String::new(),
            days: {
                use chrono::Weekday::*;
                vec![Mon, Tue, Wed, Thu, Fri]
            },
        }
    }
}

/// The user's scheduled jobs (spec §10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CronConfig {
    /// Run the cron timer in this engine.
    pub enabled: bool,
    /// A fire claim older than this belongs to a dead process: another one may fire the job.
    /// Longer than the slowest turn, or a slow fire could be taken over and run twice.
    pub claim_ttl_s: u64,
    /// The longest the timer sleeps before re-reading jobs.json (the fallback when a peer's
    /// edit was not seen by the file watcher).
    pub max_sleep_s: u64,
    /// A recurring job pauses after this many fires with no user reply in between.
    pub strike_limit: u32,
    /// Only a job whose slots can come closer together than this (in seconds) counts strikes:
    /// by default a daily (or rarer) job never pauses for want of a reply.
    pub strike_min_gap_s: u64,
    /// Where a job for an ephemeral channel (`cli`, `tui`) is delivered instead; empty keeps
    /// it on that channel.
    pub forward_channels: Vec<String>,
}

impl Default for CronConfig {
    fn default() -> Self {
        CronConfig {
            enabled: true,
            claim_ttl_s: 300,
            max_sleep_s: 60,
            strike_limit: 5,
            strike_min_gap_s: 86_400,
            forward_channels: Vec::new(),
        }
    }
}

/// The agent loop and the spine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// Tool-loop iterations per turn.
    pub max_iterations: usize,
    /// Tool-loop iterations of a micro-agent's run (`spawn_agent`).
    pub subagent_max_iterations: usize,
    /// Tokens (prompt and completion, as the replies report them, else counted) a
    /// micro-agent's run may spend; the run stops at its next step once spent.
    pub subagent_max_tokens: u64,
    /// Seconds a micro-agent's run may take; past them it is stopped and nothing is sent
    /// (a one-shot `raven tick` waits at most this long for its spawns).
    pub subagent_timeout_s: u64,
    /// Concurrent user turns (a turn waiting on ask_user holds its slot).
    pub user_pool: usize,
    /// Concurrent proactive turns (sentinel, cron, heartbeat, subagent).
    pub system_pool: usize,
    /// One ask_user call's budget for all its questions (`tools.ask_user.timeout`).
    pub ask_user_timeout_s: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_iterations: 8,
            user_pool: 4,
            system_pool: 2,
            ask_user_timeout_s: 600,
            subagent_max_iterations: 4,
            subagent_max_tokens: 16_000,
            subagent_timeout_s: 300,
        }
    }
}

/// Restart policy shared by every supervised actor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SuperviseConfig {
    pub backoff_initial_ms: u64,
    pub backoff_max_ms: u64,
    /// More restarts than this inside the window is a crash loop: the actor stops serving
    /// and reports it.
    pub max_restarts: u32,
    pub restart_window_s: u64,
    /// A crash-looping actor serves again (its state reloaded) after this long.
    pub crash_loop_cooldown_s: u64,
}

impl Default for SuperviseConfig {
    fn default() -> Self {
        SuperviseConfig {
            backoff_initial_ms: 10,
            backoff_max_ms: 5_000,
            max_restarts: 5,
            restart_window_s: 60,
            crash_loop_cooldown_s: 60,
        }
    }
}
