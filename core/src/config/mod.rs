//! `config.toml`: every knob of the spec with the spec's default. A missing file means all
//! defaults; an unknown or ill-typed key is an error naming the key and the file.

mod anticipation;
mod brief;
mod channels;
mod context;
mod delivery;
mod general;
mod heartbeat;
mod live;
mod llm;
mod loops;
mod policy;
mod provenance;
mod time_of_day;

pub use anticipation::AnticipationConfig;
pub use brief::{BriefAt, BriefConfig};
pub use channels::{
    ChannelsConfig, EmailConfig, MatrixConfig, NtfyConfig, SmtpSecurity, TelegramConfig, CHANNEL_NAMES,
};
pub use context::{BehaviorsConfig, CalendarConfig, ContextConfig};
pub use delivery::{DeliveryConfig, ExecutorConfig, GatewayConfig};
pub use general::GeneralConfig;
pub use heartbeat::HeartbeatConfig;
pub use live::{LiveConfig, Reload};
pub use llm::{BreakerConfig, LlmConfig, RetryConfig, RoleParams, DEFAULT_MAX_PROMPT_TOKENS, MAX_REPLY_BYTES};
pub use loops::{AgentConfig, CronConfig, DiscoveryConfig, SentinelConfig, SuperviseConfig, MAX_EVERY_S};
pub use policy::{AdaptiveConfig, DndWindow, FeedbackConfig, PolicyConfig};
pub use provenance::{Origin as ValueOrigin, Provenance};
pub use time_of_day::{TimeOfDay, Window};

use crate::time::{UserZone, ZoneSource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RavenConfig {
    pub general: GeneralConfig,
    pub anticipation: AnticipationConfig,
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
    pub heartbeat: HeartbeatConfig,
    pub discovery: DiscoveryConfig,
    pub brief: BriefConfig,
    pub channels: ChannelsConfig,
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
    // A `String` error: a range check's message, read by a person; ConfigError::Invalid names the file.
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
        if self.anticipation.too_far() {
            return Err(format!("each `anticipation.*_days` must be 0 to {}", anticipation::MAX_DAYS));
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
        if self.cron.strike_min_gap_s > MAX_EVERY_S {
            return Err(format!(
                "`cron.strike_min_gap_s` must be at most {} (100 years), got {}",
                MAX_EVERY_S, self.cron.strike_min_gap_s
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
    fn the_documented_example_parses() {
        let readme = include_str!("../../../docs/configuration.md");
        let start = readme.find("```toml\n").expect("a toml block") + 8;
        let end = start + readme[start..].find("```").unwrap();
        let c = parse(&readme[start..end]).unwrap();
        assert_eq!(c.policy.quiet_hours.to_string(), "22:00-07:30");
        assert_eq!(c.policy.dnd_windows[0].weekdays.len(), 5);
        assert_eq!(c.policy.dnd_windows[0].weekdays[0], chrono::Weekday::Mon);
    }

    #[test]
    fn the_anticipation_ladder_is_set_in_days_and_bounded() {
        let c = parse("[anticipation]\npayment_days = 5\nbooking_days = 0\n").unwrap();
        let ladder = c.anticipation.ladder();
        assert_eq!(ladder.lead(crate::time::Need::Payment), Some(chrono::Duration::days(5)));
        assert_eq!(ladder.lead(crate::time::Need::Booking), None, "0: the day before only");
        assert_eq!(ladder.lead(crate::time::Need::Trip), Some(chrono::Duration::days(3)), "the default");
        let err = parse("[anticipation]\npayment_days = 99\n").unwrap_err().to_string();
        assert!(err.contains("anticipation.*_days") && err.contains("60"), "{err}");
    }

    #[test]
    fn the_language_is_auto_en_or_zh() {
        use crate::time::LanguageSetting;
        assert_eq!(parse("").unwrap().general.language, LanguageSetting::Auto);
        assert_eq!(parse("[general]\nlanguage = \"zh\"\n").unwrap().general.language, LanguageSetting::Zh);
        let err = parse("[general]\nlanguage = \"fr\"\n").unwrap_err().to_string();
        assert!(err.contains("language") && err.contains("auto"), "{err}");
    }

    #[test]
    fn file_values_override_defaults() {
        let c = parse("[general]\ntimezone = \"Europe/Berlin\"\n[policy]\nmax_per_day = 3\n").unwrap();
        assert_eq!(c.policy.max_per_day, 3);
        assert_eq!(c.general.timezone, chrono_tz::Europe::Berlin);
        assert_eq!(c.policy.max_per_hour, 2);
    }
}
