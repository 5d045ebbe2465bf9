//! Waits that double after each failure in a row. [`Backoff`] is the one doubling wait of the
//! restarts, listeners, locks and retries (a supervised loop, a channel listener, the gateway
//! child, a state lock, the control socket's accept, an actor's restart, a model call, a
//! webhook). [`LoopBackoff`] paces an LLM-backed loop that failed (the daily analysis, task
//! discovery, the behaviors extractor): the next attempt waits 30 minutes, then twice as long
//! after each further failure, with at most six attempts a local day; every failure is one
//! warn line. A success, or a new day, starts over.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

/// A wait that starts at `first` and doubles with each failure in a row, never past `max`;
/// `reset` after a success starts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    first: std::time::Duration,
    max: std::time::Duration,
    failures: u32,
}

impl Backoff {
    pub const fn new(first: std::time::Duration, max: std::time::Duration) -> Self {
        Backoff { first, max, failures: 0 }
    }

    /// The wait before retry `n` (1-based): `first × 2^(n-1)`, at most `max`.
    pub fn wait_before(&self, n: u32) -> std::time::Duration {
        self.first.saturating_mul(1 << n.saturating_sub(1).min(16)).min(self.max)
    }

    /// One more failure: the wait before the next try (`first`, then twice that, …).
    pub fn next_wait(&mut self) -> std::time::Duration {
        self.failures = self.failures.saturating_add(1);
        self.wait_before(self.failures)
    }

    /// Failures since the last reset.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

pub const FIRST_WAIT: Duration = Duration::minutes(30);
pub const ATTEMPTS_PER_DAY: u32 = 6;

#[derive(Debug, Clone)]
pub struct LoopBackoff {
    what: &'static str,
    day: Option<NaiveDate>,
    /// Failures today: each was an attempt.
    failed_today: u32,
    /// Failures in a row (the wait doubles with each).
    failures: u32,
    next_at: Option<DateTime<Utc>>,
}

impl LoopBackoff {
    pub fn new(what: &'static str) -> Self {
        LoopBackoff { what, day: None, failed_today: 0, failures: 0, next_at: None }
    }

    fn roll(&mut self, now: DateTime<Utc>, tz: Tz) {
        let today = now.with_timezone(&tz).date_naive();
        if self.day != Some(today) {
            *self = LoopBackoff { day: Some(today), ..LoopBackoff::new(self.what) };
        }
    }

    /// May the loop try now? (A try that does not fail costs nothing.)
    pub fn attempt(&mut self, now: DateTime<Utc>, tz: Tz) -> bool {
        self.roll(now, tz);
        self.next_at.is_none_or(|t| now >= t) && self.failed_today < ATTEMPTS_PER_DAY
    }

    pub fn failed(&mut self, now: DateTime<Utc>, error: &str) {
        let wait = FIRST_WAIT * (1i32 << self.failures.min(10));
        self.failures += 1;
        self.failed_today += 1;
        self.next_at = Some(now + wait);
        let left = ATTEMPTS_PER_DAY.saturating_sub(self.failed_today);
        tracing::warn!(
            what = self.what,
            "failed ({error}); next attempt in {} min, {left} left today",
            wait.num_minutes()
        );
    }

    pub fn succeeded(&mut self) {
        self.failures = 0;
        self.next_at = None;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_backoff_doubles_from_first_to_max_and_a_reset_starts_over() {
        use std::time::Duration as Std;
        let mut b = super::Backoff::new(Std::from_millis(10), Std::from_millis(50));
        let waits: Vec<u128> = (0..5).map(|_| b.next_wait().as_millis()).collect();
        assert_eq!(waits, [10, 20, 40, 50, 50]);
        assert_eq!(b.failures(), 5);
        b.reset();
        assert_eq!((b.failures(), b.next_wait()), (0, Std::from_millis(10)));
        assert_eq!(
            (b.wait_before(1), b.wait_before(3), b.wait_before(0)),
            (Std::from_millis(10), Std::from_millis(40), Std::from_millis(10))
        );
        // A max below first caps the very first wait; a huge count saturates, never overflows.
        assert_eq!(super::Backoff::new(Std::from_secs(2), Std::from_secs(1)).wait_before(1), Std::from_secs(1));
        assert_eq!(super::Backoff::new(Std::from_secs(u64::MAX / 2), Std::MAX).wait_before(u32::MAX), Std::MAX);
    }

    use super::*;
    use chrono::TimeZone;

    #[test]
    fn waits_double_from_thirty_minutes_six_attempts_a_day_and_a_new_day_starts_over() {
        let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 6, 0, 0).unwrap();
        let mut b = LoopBackoff::new("test");
        let mut t = t0;
        let mut tries = Vec::new();
        while t < t0 + Duration::hours(17) {
            if b.attempt(t, Tz::UTC) {
                tries.push((t - t0).num_minutes());
                b.failed(t, "down");
            }
            t += Duration::minutes(5);
        }
        assert_eq!(tries, [0, 30, 90, 210, 450, 930], "30, 60, 120, 240, 480 min apart; six a day");
        let tomorrow = Utc.with_ymd_and_hms(2026, 3, 3, 0, 5, 0).unwrap();
        assert!(b.attempt(tomorrow, Tz::UTC), "a new day starts over");
        b.succeeded();
        assert!(b.attempt(tomorrow + Duration::minutes(1), Tz::UTC), "a success clears the wait");
    }
}
