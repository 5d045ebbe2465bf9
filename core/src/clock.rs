//! All time comes from a [`Clock`]: the system clock in production, a manual clock in tests
//! and `raven simulate`, so a week of quotas and cooldowns runs in milliseconds.

use chrono::{DateTime, Duration, Utc};
use futures_util::future::LocalBoxFuture;
use std::sync::{Arc, Mutex};

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;

    /// Waits `d` (a retry's backoff, say): in real time on the system clock; a manual clock
    /// moves forward by `d` at once, so a wait of a second costs a test nothing.
    fn sleep(&self, d: std::time::Duration) -> LocalBoxFuture<'static, ()> {
        Box::pin(actix_rt::time::sleep(d))
    }
}

pub type SharedClock = Arc<dyn Clock>;

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that moves only when told to. Clones share one time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock(Arc::new(Mutex::new(start)))
    }

    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = at;
    }

    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += by;
    }

    pub fn shared(&self) -> SharedClock {
        Arc::new(self.clone())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sleep(&self, d: std::time::Duration) -> LocalBoxFuture<'static, ()> {
        self.advance(Duration::from_std(d).unwrap_or(Duration::MAX));
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn manual_clock_moves_only_when_told_and_clones_share_time() {
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let c = ManualClock::new(start);
        let c2 = c.clone();
        assert_eq!(c.now(), start);
        c.advance(Duration::minutes(90));
        assert_eq!(c2.now(), start + Duration::minutes(90));
        c2.set(start);
        assert_eq!(c.now(), start);
    }

    #[actix_rt::test]
    async fn a_manual_sleep_moves_the_clock_at_once() {
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let c = ManualClock::new(start);
        let real = std::time::Instant::now();
        c.sleep(std::time::Duration::from_secs(30)).await;
        assert_eq!(c.now(), start + Duration::seconds(30));
        assert!(real.elapsed() < std::time::Duration::from_secs(1));
    }
}
