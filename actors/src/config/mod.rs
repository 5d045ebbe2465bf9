//! `config.toml`: every knob of the spec with the spec's default. A missing file means all
//! defaults; an unknown or ill-typed key is an error naming the key and the file.

mod channels;
mod live;
mod llm;
mod provenance;
mod time_of_day;

pub use channels::{
    ChannelsConfig, EmailConfig, MatrixConfig, NtfyConfig, SmtpSecurity, TelegramConfig, CHANNEL_NAMES,
};
pub use live::{LiveConfig, Reload};
pub use llm::{BreakerConfig, RetryConfig, RoleParams};
pub use provenance::{Origin as ValueOrigin, Provenance};
pub use time_of_day::{TimeOfDay, Window};

use crate::time::{DateOrder, UserZone, ZoneSource};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RavenConfig {
    pub general: GeneralConfig,
    pub sentinel: SentinelConfig,
    pub policy: PolicyConfig,
    pub feedback: FeedbackConfig,
    pub supervise: SuperviseConfig,
    pub context: ContextConfig,
    pub llm: LlmConfig,
    pub delivery: DeliveryConfig,
    pub executor: ExecutorConfig,
    pub agent: AgentConfig,
    pub gateway: GatewayConfig,
    pub cron: CronConfig,
    pub heartbeat: crate::heartbeat::HeartbeatConfig,
    pub discovery: DiscoveryConfig,
    pub channels: ChannelsConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeneralConfig {
    /// The user's IANA time zone: quiet hours, day quotas and weekends are read in it. When the
    /// file does not set it, [`RavenConfig::load`] resolves it from `TZ`, then the system zone.
    pub timezone: Tz,
    /// How a numeric date with `/` in the user's notes is read: `month_first` (5/6 is May 6)
    /// or `day_first` (5 June). Dates with `.` are always day first.
    pub date_order: DateOrder,
    /// Where `timezone` came from (not a key of the file).
    #[serde(skip)]
    pub timezone_source: ZoneSource,
    /// What could not be read while resolving the zone (not a key of the file).
    #[serde(skip)]
    pub timezone_warning: Option<String>,
}

impl Default for GeneralConfig {
    fn default() -> Self {
        GeneralConfig {
            timezone: Tz::UTC,
            date_order: DateOrder::default(),
            timezone_source: ZoneSource::Fallback,
            timezone_warning: None,
        }
    }
}

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

/// What the ContextAssembler reads (spec §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    /// Bytes of the end of history.md handed to the Planner.
    pub history_tail_bytes: usize,
    /// A session is active when its last message is this recent.
    pub active_window_minutes: i64,
    /// The H2 sections of attention.md the Planner sees.
    pub attention_sections: Vec<String>,
    /// Events of behaviors.md in the folded tail.
    pub behaviors_tail_events: usize,
    /// Distinct days a topic must recur at one hour to count as a routine.
    pub routine_min_days: u32,
    /// The DailyAnalysisService: one LLM call a day shared by the LLM-backed attention
    /// producers. Off by default.
    pub daily_analysis: bool,
    /// The idle-triggered extractor of behaviors.md (off by default; needs an LLM).
    pub behaviors: crate::context::behaviors_extractor::BehaviorsConfig,
    /// One line per user message in workspace/history.md (what routines are learned from).
    pub history_enabled: bool,
    /// A routine unseen for this many days is forgotten.
    pub routine_forget_days: u32,
    /// The user's own calendar files.
    pub calendar: CalendarConfig,
}

/// `[context.calendar]`: iCalendar files whose events are announced before they start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CalendarConfig {
    /// `.ics` files, relative to the data dir (or absolute). A missing file has no events.
    pub paths: Vec<String>,
    /// How long before an event without its own alarm (VALARM) it is announced.
    pub notice_minutes: i64,
    /// How far ahead events are read.
    pub horizon_days: i64,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        CalendarConfig { paths: vec!["workspace/calendar.ics".into()], notice_minutes: 60, horizon_days: 14 }
    }
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            history_tail_bytes: 16 * 1024,
            active_window_minutes: 30,
            attention_sections: ["Upcoming deadlines", "Today's plan", "Recent engagement", "Routines", "Daily focus"]
                .map(String::from)
                .to_vec(),
            behaviors_tail_events: 20,
            routine_min_days: 3,
            daily_analysis: false,
            behaviors: Default::default(),
            history_enabled: true,
            routine_forget_days: 14,
            calendar: CalendarConfig::default(),
        }
    }
}

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
        }
    }
}

/// The LLM endpoint. With no `base_url` the embedded `rules` provider decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// An OpenAI-compatible API root, e.g. `http://127.0.0.1:11434/v1`; empty for `rules`.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (the key never sits in the file).
    pub api_key_env: String,
    pub timeout_s: u64,
    /// A reply body larger than this is a logged failure, never stored.
    pub max_reply_bytes: usize,
    /// Every prompt (the Planner, discovery, the heartbeat, the agent) is built within this
    /// many tokens (see `planner::budget` for what is kept first).
    pub max_prompt_tokens: u32,
    /// Tokens a local day that the proactive roles may spend (0: no limit); once spent they
    /// skip, the user's own turns never do.
    pub daily_token_budget: u64,
    /// Whether the model is a reasoning model (no temperature, `max_completion_tokens`, the
    /// lowest reasoning effort); unset, it is guessed from `model`.
    pub reasoning: Option<bool>,
    pub planner: RoleParams,
    pub agent: RoleParams,
    pub heartbeat: RoleParams,
    pub retry: RetryConfig,
    pub breaker: BreakerConfig,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_s: 30,
            max_reply_bytes: crate::planner::openai::MAX_REPLY_BYTES,
            max_prompt_tokens: crate::planner::budget::DEFAULT_MAX_PROMPT_TOKENS,
            daily_token_budget: 0,
            reasoning: None,
            planner: RoleParams::default(),
            agent: RoleParams::default(),
            heartbeat: RoleParams::default(),
            retry: RetryConfig::default(),
            breaker: BreakerConfig::default(),
        }
    }
}

/// A named do-not-disturb window of the persona (layer 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DndWindow {
    pub name: String,
    pub start: TimeOfDay,
    pub end: TimeOfDay,
    /// Days it applies on (`mon` … `sun`); empty means every day.
    #[serde(default)]
    pub weekdays: Vec<chrono::Weekday>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// Layer 2: quiet hours, in `general.timezone` (default 23:00–07:00).
    pub quiet_hours: Window,
    /// Further quiet windows, read like `quiet_hours` (layer 2); user preferences that do not
    /// touch `quiet_hours` land here.
    pub extra_quiet_hours: Vec<Window>,
    /// Layer 2 bypass withdrawal: high priority no longer bypasses quiet hours once at
    /// least `quiet_bypass_min_samples` high-priority verdicts show an acceptance below this.
    pub quiet_bypass_min_acceptance: f64,
    pub quiet_bypass_min_samples: u32,
    /// Layer 2b: an hour of day becomes do-not-disturb once it gathered this many
    /// dismissals with an acceptance at or below `dynamic_dnd_max_acceptance`.
    pub dynamic_dnd_min_dismissals: u32,
    pub dynamic_dnd_max_acceptance: f64,
    /// Layer 3.
    pub dnd_windows: Vec<DndWindow>,
    /// Layer 4: hard cap per local calendar day.
    pub max_per_day: u32,
    /// Layer 5: per rolling hour, before the adaptive and weekend multipliers.
    pub max_per_hour: u32,
    /// Layer 6.
    pub session_cooldown_minutes: i64,
    /// Layer 7.
    pub dismissal_cooldown_minutes: i64,
    /// Layer 8: a topic whose decayed reject weight reaches the threshold is cooled down
    /// for `topic_reject_cooldown_hours × weight` (at most the max) after its last reject.
    pub topic_reject_weight_threshold: f64,
    pub topic_reject_cooldown_hours: i64,
    pub topic_reject_max_cooldown_hours: i64,
    /// Layer 9.
    pub topic_min_samples: u32,
    pub topic_min_acceptance: f64,
    /// Layer 10 (also the window in which a cron fire suppresses a nudge on its topic).
    pub dedup_window_minutes: i64,
    /// Layer 11: rolling per-topic stack.
    pub topic_max_per_hour: u32,
    pub topic_max_per_day: u32,
    pub topic_max_per_week: u32,
    /// spawn_agent's own quota line (layers 4 and 5 for spawns).
    pub spawn_max_per_day: u32,
    pub spawn_max_per_hour: u32,
    pub adaptive: AdaptiveConfig,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            quiet_hours: Window::new(TimeOfDay::hm(23, 0), TimeOfDay::hm(7, 0)),
            extra_quiet_hours: Vec::new(),
            quiet_bypass_min_acceptance: 0.3,
            quiet_bypass_min_samples: 5,
            dynamic_dnd_min_dismissals: 3,
            dynamic_dnd_max_acceptance: 0.25,
            dnd_windows: Vec::new(),
            max_per_day: 8,
            max_per_hour: 2,
            session_cooldown_minutes: 30,
            dismissal_cooldown_minutes: 120,
            topic_reject_weight_threshold: 1.0,
            topic_reject_cooldown_hours: 48,
            topic_reject_max_cooldown_hours: 336,
            topic_min_samples: 4,
            topic_min_acceptance: 0.2,
            dedup_window_minutes: 360,
            topic_max_per_hour: 1,
            topic_max_per_day: 3,
            topic_max_per_week: 10,
            spawn_max_per_day: 4,
            spawn_max_per_hour: 1,
            adaptive: AdaptiveConfig::default(),
        }
    }
}

/// The adaptive hour-quota multiplier (spec §5 "Adaptive multiplier").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveConfig {
    pub min_multiplier: f64,
    pub max_multiplier: f64,
    /// Acceptance rate at which the target multiplier is 1.0; the target moves linearly
    /// (symmetrically) with the rate around it: `1 + (rate - pivot) * gain`.
    pub pivot: f64,
    pub gain: f64,
    /// Hysteresis band: the multiplier moves only when the target is further than this.
    pub band: f64,
    /// Cold-start floor: below this many verdicts the multiplier stays at 1.0.
    pub cold_start_samples: u32,
    /// Asymmetric volume gate: tightening needs this many verdicts …
    pub min_samples_tighten: u32,
    /// … loosening needs more.
    pub min_samples_loosen: u32,
    /// Extra factor on the hour quota on Saturday and Sunday (user's zone).
    pub weekend_factor: f64,
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            min_multiplier: 0.5,
            max_multiplier: 1.5,
            pivot: 0.5,
            gain: 1.0,
            band: 0.15,
            cold_start_samples: 5,
            min_samples_tighten: 5,
            min_samples_loosen: 15,
            weekend_factor: 0.5,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeedbackConfig {
    /// Acceptance rates are computed over this many days.
    pub window_days: i64,
    /// The daily trim drops lifecycle records older than this.
    pub retention_days: i64,
    /// Half-life of a reject's weight in layer 8.
    pub reject_half_life_days: f64,
    /// Weight of a plain dismissal and of a hard reject ("stop reminding me").
    pub dismiss_weight: f64,
    pub hard_reject_weight: f64,
    /// A reply within this many hours of a proactive message is a reaction to it (the
    /// engagement hook, and `nudge_feedback` / `/stop` without an id).
    pub reaction_window_h: i64,
    /// Awake hours (quiet hours do not count) without a reply before a message someone
    /// could see is recorded `ignored`.
    pub ignore_after_h: i64,
    /// What an `ignored` adds to its topic's reject weight.
    pub ignore_weight: f64,
    /// How long `/stop <topic>` mutes the topic.
    pub stop_mute_days: i64,
}

impl Default for FeedbackConfig {
    fn default() -> Self {
        FeedbackConfig {
            window_days: 14,
            retention_days: 30,
            reject_half_life_days: 7.0,
            dismiss_weight: 0.5,
            hard_reject_weight: 1.0,
            reaction_window_h: 6,
            ignore_after_h: 6,
            ignore_weight: 0.25,
            stop_mute_days: 30,
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

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config in {path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl RavenConfig {
    /// Reads `path`; a missing file is the embedded defaults. The zone the file does not set is
    /// resolved from the process's environment (`TZ`, then the system zone).
    pub fn load(path: &Path) -> Result<(RavenConfig, Provenance), ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => return Err(ConfigError::Read { path: path.to_owned(), source }),
        };
        let (mut config, mut provenance) = RavenConfig::parse(&text, path)?;
        if config.general.timezone_source == ZoneSource::Fallback {
            let zone = crate::time::resolve_from_env(None);
            config.set_zone(&zone);
            provenance.set_zone(&zone);
        }
        Ok((config, provenance))
    }

    /// Takes `zone` as the user's zone (a running supervisor's, say), with its source.
    pub fn set_zone(&mut self, zone: &UserZone) {
        self.general.timezone = zone.tz;
        self.general.timezone_source = zone.source.clone();
        self.general.timezone_warning = zone.warning.clone();
    }

    /// Parses config text; `path` only names the file in errors and provenance.
    pub fn parse(text: &str, path: &Path) -> Result<(RavenConfig, Provenance), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { path: path.to_owned(), message };
        let file: toml::Table = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let config: RavenConfig = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut config = config;
        config.check().map_err(invalid)?;
        let set_in_file = file.get("general").and_then(|g| g.get("timezone")).is_some();
        if set_in_file {
            config.general.timezone_source = ZoneSource::Config(path.display().to_string());
        }
        let provenance = Provenance::new(&config, &file, path);
        Ok((config, provenance))
    }

    /// Range checks serde cannot express.
    fn check(&self) -> Result<(), String> {
        let p = &self.policy;
        let a = &p.adaptive;
        let unit = [
            ("policy.quiet_bypass_min_acceptance", p.quiet_bypass_min_acceptance),
            ("policy.dynamic_dnd_max_acceptance", p.dynamic_dnd_max_acceptance),
            ("policy.topic_min_acceptance", p.topic_min_acceptance),
            ("policy.adaptive.pivot", a.pivot),
        ];
        for (key, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("`{key}` must be between 0 and 1, got {v}"));
            }
        }
        if !(a.min_multiplier > 0.0 && a.min_multiplier <= 1.0 && a.max_multiplier >= 1.0) {
            return Err("`policy.adaptive` needs 0 < min_multiplier <= 1 <= max_multiplier".into());
        }
        if !(a.weekend_factor > 0.0 && a.weekend_factor <= 1.0) {
            return Err("`policy.adaptive.weekend_factor` must be in (0, 1]".into());
        }
        if self.llm.timeout_s == 0 {
            return Err("`llm.timeout_s` must be at least 1".into());
        }
        let g = &self.gateway;
        if std::net::ToSocketAddrs::to_socket_addrs(g.listen.as_str()).map_or(true, |mut a| a.next().is_none()) {
            return Err(format!(
                "`gateway.listen` = {:?} is not an address to listen on (say `127.0.0.1:8787`)",
                g.listen
            ));
        }
        if g.max_connections == 0 || g.header_timeout_s == 0 || g.body_timeout_s == 0 {
            return Err("`gateway.max_connections`, `header_timeout_s` and `body_timeout_s` must be at least 1".into());
        }
        if self.llm.max_reply_bytes < 1024 {
            return Err("`llm.max_reply_bytes` must be at least 1024".into());
        }
        for (role, params) in
            [("planner", &self.llm.planner), ("agent", &self.llm.agent), ("heartbeat", &self.llm.heartbeat)]
        {
            params.check(role)?;
        }
        llm::check_retry(&self.llm.retry, &self.llm.breaker)?;
        self.channels.check()?;
        if self.sentinel.interval_s == 0 {
            return Err("`sentinel.interval_s` must be at least 1".into());
        }
        if self.cron.strike_min_gap_s > crate::cron::schedule::MAX_EVERY_S {
            return Err(format!(
                "`cron.strike_min_gap_s` must be at most {} (100 years), got {}",
                crate::cron::schedule::MAX_EVERY_S,
                self.cron.strike_min_gap_s
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RavenConfig, ConfigError> {
        RavenConfig::parse(text, Path::new("/data/config.toml")).map(|(c, _)| c)
    }

    #[test]
    fn empty_file_is_the_spec_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, RavenConfig::default());
        assert_eq!(c.policy.quiet_hours.to_string(), "23:00-07:00");
        assert_eq!(c.sentinel.interval_s, 1800);
        assert!(!c.sentinel.enabled);
    }

    #[test]
    fn unknown_key_names_the_key_and_the_file() {
        let err = parse("[policy]\nmax_per_dya = 3\n").unwrap_err().to_string();
        assert!(err.contains("max_per_dya"), "{err}");
        assert!(err.contains("/data/config.toml"), "{err}");
    }

    #[test]
    fn ill_typed_key_names_the_key_and_the_file() {
        let err = parse("[policy]\nmax_per_day = \"lots\"\n").unwrap_err().to_string();
        assert!(err.contains("max_per_day"), "{err}");
        assert!(err.contains("/data/config.toml"), "{err}");
        let err = parse("[policy.quiet_hours]\nstart = \"25:00\"\nend = \"07:00\"\n").unwrap_err().to_string();
        assert!(err.contains("HH:MM"), "{err}");
        let err = parse("[general]\ntimezone = \"Mars/Base\"\n").unwrap_err().to_string();
        assert!(err.contains("timezone"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let err = parse("[policy]\ntopic_min_acceptance = 2.0\n").unwrap_err().to_string();
        assert!(err.contains("policy.topic_min_acceptance"), "{err}");
        for listen in ["not an address", "127.0.0.1", "127.0.0.1:99999"] {
            let err = parse(&format!("[gateway]\nlisten = {listen:?}\n")).unwrap_err().to_string();
            assert!(err.contains("`gateway.listen`"), "{listen}: {err}");
        }
        assert!(parse("[gateway]\nlisten = \"127.0.0.1:0\"\n").is_ok());
        let err = parse("[cron]\nstrike_min_gap_s = 9999999999\n").unwrap_err().to_string();
        assert!(err.contains("cron.strike_min_gap_s"), "{err}");
        assert_eq!(parse("[cron]\nstrike_min_gap_s = 3600\n").unwrap().cron.strike_min_gap_s, 3600);
    }

    #[test]
    fn the_readme_example_parses() {
        let readme = include_str!("../../../README.md");
        let start = readme.find("```toml\n").expect("a toml block") + 8;
        let end = start + readme[start..].find("```").unwrap();
        let c = parse(&readme[start..end]).unwrap();
        assert_eq!(c.policy.quiet_hours.to_string(), "22:00-07:30");
        assert_eq!(c.policy.dnd_windows[0].weekdays.len(), 5);
        assert_eq!(c.policy.dnd_windows[0].weekdays[0], chrono::Weekday::Mon);
    }

    #[test]
    fn file_values_override_defaults() {
        let c = parse("[general]\ntimezone = \"Europe/Berlin\"\n[policy]\nmax_per_day = 3\n").unwrap();
        assert_eq!(c.policy.max_per_day, 3);
        assert_eq!(c.general.timezone, chrono_tz::Europe::Berlin);
        assert_eq!(c.policy.max_per_hour, 2);
    }
}
