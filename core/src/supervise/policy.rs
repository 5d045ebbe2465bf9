//! How a failed actor or loop is started again: the doubling wait, the crash-loop limit of an
//! actor, the healthy run that starts a loop's doubling over, and the fault switch
//! (`RAVEN_FAULT`) the fault suite sets.

use crate::config::SuperviseConfig;
use std::time::Duration;

/// Restart policy: exponential backoff, and a limit of restarts per window.
#[derive(Debug, Clone)]
pub struct RestartPolicy {
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// A run of a supervised loop this long was healthy: the next wait starts from
    /// `backoff_initial` again (`None`: the doubling never starts over). An actor's restarts
    /// are counted in `window` instead.
    pub healthy_run: Option<Duration>,
    pub max_restarts: u32,
    pub window: Duration,
    /// Fault switch for tests and the fault suite: panic while handling the n-th message
    /// (1-based, counted over the actor's life). `RAVEN_FAULT=<actor>:<n>` sets it;
    /// `<actor>:<n>+` panics on every message from the n-th on (a crash loop).
    pub panic_at: Option<u64>,
    pub panic_onwards: bool,
    /// How long a crash loop stays shut before the actor is reloaded and serves again.
    pub cooldown: Duration,
}

impl From<&SuperviseConfig> for RestartPolicy {
    fn from(c: &SuperviseConfig) -> Self {
        RestartPolicy {
            backoff_initial: Duration::from_millis(c.backoff_initial_ms),
            backoff_max: Duration::from_millis(c.backoff_max_ms),
            healthy_run: None,
            max_restarts: c.max_restarts,
            window: Duration::from_secs(c.restart_window_s),
            panic_at: None,
            panic_onwards: false,
            cooldown: Duration::from_secs(c.crash_loop_cooldown_s),
        }
    }
}

impl RestartPolicy {
    /// This policy with the fault from `RAVEN_FAULT=<actor>:<n>` when it names `actor`.
    pub fn with_fault_from_env(mut self, actor: &str) -> Self {
        if let Some((n, onwards)) = std::env::var("RAVEN_FAULT").ok().and_then(|spec| parse_fault(&spec, actor)) {
            self.panic_at = Some(n);
            self.panic_onwards = onwards;
        }
        self
    }

    /// Whether the fault switch fires on the `n`-th message.
    pub(crate) fn faults_at(&self, n: u64) -> bool {
        match self.panic_at {
            Some(at) if self.panic_onwards => n >= at,
            Some(at) => n == at,
            None => false,
        }
    }
}

/// `"<actor>:<n>"` → `Some((n, false))` when it names `actor`; `"<actor>:<n>+"` →
/// `Some((n, true))` (every message from the n-th on).
pub fn parse_fault(spec: &str, actor: &str) -> Option<(u64, bool)> {
    spec.split(',').find_map(|one| {
        let (name, n) = one.trim().rsplit_once(':')?;
        if name != actor {
            return None;
        }
        match n.strip_suffix('+') {
            Some(n) => n.parse().ok().map(|n| (n, true)),
            None => n.parse().ok().map(|n| (n, false)),
        }
    })
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy::from(&SuperviseConfig::default())
    }
}
