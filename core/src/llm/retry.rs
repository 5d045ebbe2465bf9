//! When a failed provider request is tried again, and after how long: 429, 408, 5xx, a
//! timeout or a connection that failed are retried, up to `llm.retry.attempts` requests in
//! all, each wait the server's `Retry-After` when it gave one, else an exponential backoff with
//! seeded jitter; no wait is started that would end past the call's deadline.

use super::provider::ProviderError;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// `[llm.retry]`, as the retrying provider uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Requests in all for one call (1: no retry).
    pub attempts: u32,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// The whole call, its waits included, ends within this.
    pub deadline: Duration,
}

impl From<&crate::config::RetryConfig> for RetryPolicy {
    fn from(c: &crate::config::RetryConfig) -> Self {
        RetryPolicy {
            attempts: c.attempts,
            backoff_initial: Duration::from_millis(c.backoff_initial_ms),
            backoff_max: Duration::from_millis(c.backoff_max_ms),
            deadline: Duration::from_secs(c.deadline_s),
        }
    }
}

/// Whether the request may succeed if tried again: rate limited, the server overloaded or
/// failing, or the request lost on the way.
pub fn retryable(e: &ProviderError) -> bool {
    match e {
        ProviderError::Http { status, .. } => matches!(status, 408 | 429 | 500..=599),
        ProviderError::Timeout(_) | ProviderError::Transport(_) => true,
        ProviderError::Decode(_) | ProviderError::TooLarge { .. } | ProviderError::CutOff { .. } => false,
        ProviderError::Down { .. } | ProviderError::BudgetSpent { .. } => false,
    }
}

/// A small seeded generator (splitmix64): the same seed, the same waits.
#[derive(Debug, Clone)]
pub struct Jitter(u64);

impl Jitter {
    pub fn new(seed: u64) -> Self {
        Jitter(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A fraction in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): the server's `Retry-After` when it gave
    /// one (never less), else half the exponential step plus a random half of it ("equal
    /// jitter"), capped at `backoff_max`.
    pub fn wait(&self, retry: u32, error: &ProviderError, jitter: &mut Jitter) -> Duration {
        let step = crate::supervise::backoff::Backoff::new(self.backoff_initial, self.backoff_max).wait_before(retry);
        let backoff = step / 2 + step.mul_f64(jitter.unit() / 2.0);
        match error {
            ProviderError::Http { retry_after: Some(asked), .. } => *asked,
            _ => backoff,
        }
    }
}

/// A `Retry-After` value: delta seconds, or an HTTP date read against `now`.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?.to_utc();
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            attempts: 3,
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            deadline: Duration::from_secs(60),
        }
    }

    fn http(status: u16, retry_after: Option<Duration>) -> ProviderError {
        ProviderError::Http { status, body: String::new(), retry_after }
    }

    #[test]
    fn rate_limits_server_errors_and_lost_requests_are_retried_client_errors_are_not() {
        for e in [http(429, None), http(500, None), http(503, None), http(408, None)] {
            assert!(retryable(&e), "{e}");
        }
        assert!(retryable(&ProviderError::Timeout(100)) && retryable(&ProviderError::Transport("refused".into())));
        for e in [http(400, None), http(401, None), http(404, None), ProviderError::Decode("x".into())] {
            assert!(!retryable(&e), "{e}");
        }
        assert!(!retryable(&ProviderError::CutOff { limit: 400 }));
    }

    #[test]
    fn waits_are_jittered_doubling_capped_and_the_same_for_the_same_seed() {
        let p = policy();
        let waits = |seed| {
            let mut j = Jitter::new(seed);
            (1..=6).map(|n| p.wait(n, &http(500, None), &mut j)).collect::<Vec<_>>()
        };
        let a = waits(7);
        assert_eq!(a, waits(7), "seeded");
        assert_ne!(a, waits(8), "jittered");
        for (n, w) in a.iter().enumerate() {
            let step = (Duration::from_millis(500) * (1 << n)).min(Duration::from_secs(8));
            assert!(*w >= step / 2 && *w <= step, "retry {}: {w:?} within [{:?}, {step:?}]", n + 1, step / 2);
        }
    }

    #[test]
    fn retry_after_is_honoured_in_seconds_or_as_a_date() {
        let p = policy();
        let asked = http(429, Some(Duration::from_secs(7)));
        assert_eq!(p.wait(1, &asked, &mut Jitter::new(1)), Duration::from_secs(7));
        let now = Utc.with_ymd_and_hms(2015, 10, 21, 7, 27, 30).unwrap();
        assert_eq!(parse_retry_after(" 1 ", now), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
