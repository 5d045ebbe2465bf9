//! The heartbeat's knobs (spec §11). The integrator nests this in the main config as
//! `[heartbeat]`; the defaults are the spec's.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeartbeatConfig {
    /// Whether the heartbeat loop runs at all. On by default: a missing or blank
    /// HEARTBEAT.md costs no LLM call, so an unused heartbeat is free.
    pub enabled: bool,
    /// Seconds between regular heartbeat ticks (default 1800).
    pub interval_s: u64,
    /// The rate guard of the event-driven wake: a wake never fires a tick sooner than this
    /// many seconds after the previous tick. A request inside the window is kept and fires
    /// once when the window ends (default 60).
    pub wake_min_gap_s: u64,
}

impl Default for HeartbeatConfig {
    fn default() -> Self {
        HeartbeatConfig { enabled: true, interval_s: 1800, wake_min_gap_s: 60 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_missing_fields_and_unknown_ones_are_refused() {
        let c: HeartbeatConfig = toml::from_str("interval_s = 600").unwrap();
        assert_eq!(c, HeartbeatConfig { interval_s: 600, ..HeartbeatConfig::default() });
        assert_eq!(toml::from_str::<HeartbeatConfig>("").unwrap(), HeartbeatConfig::default());
        assert!(toml::from_str::<HeartbeatConfig>("interval = 5").is_err());
    }
}
