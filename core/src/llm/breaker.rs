//! The provider's breaker: after `llm.breaker.failures` failed requests in a row (429, 5xx,
//! timeouts, lost connections; each retry counts) the provider is marked down for
//! `llm.breaker.open_s` and not called at all; every call meanwhile fails at once with
//! [`ProviderError::Down`], which the callers degrade as they degrade any provider error (the
//! Planner to a skip, after the high-priority deadline fallback). Once the time is up, the next
//! call is a probe: a success closes the breaker, a failure opens it again. Time is the engine's
//! clock. Clones share one state.

use super::provider::ProviderError;
use crate::clock::SharedClock;
use chrono::{DateTime, Utc};
use raven_proto::control::LlmHealth;
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Debug, Default)]
struct State {
    failures: u32,
    open_until: Option<DateTime<Utc>>,
    opened: u64,
    last_error: Option<String>,
}

#[derive(Clone)]
pub struct Breaker {
    /// The model behind the provider, for `raven status`.
    model: String,
    threshold: u32,
    open_for: chrono::Duration,
    clock: SharedClock,
    state: Rc<RefCell<State>>,
}

impl Breaker {
    pub fn new(config: &crate::config::BreakerConfig, model: &str, clock: SharedClock) -> Self {
        Breaker {
            model: model.to_owned(),
            threshold: config.failures.max(1),
            open_for: chrono::Duration::seconds(config.open_s as i64),
            clock,
            state: Rc::default(),
        }
    }

    /// Whether a request may go out now: not while the breaker is open.
    pub fn admit(&self) -> Result<(), ProviderError> {
        let s = self.state.borrow();
        match s.open_until {
            Some(until) if self.clock.now() < until => Err(ProviderError::Down { until, failures: s.failures }),
            _ => Ok(()),
        }
    }

    /// A request that failed in a way that says the provider is unwell.
    pub fn failed(&self, error: &ProviderError) {
        let mut s = self.state.borrow_mut();
        s.failures += 1;
        s.last_error = Some(error.to_string());
        let probing = s.open_until.is_some();
        if s.failures >= self.threshold || probing {
            let until = self.clock.now() + self.open_for;
            s.open_until = Some(until);
            s.opened += 1;
            tracing::warn!(
                failures = s.failures,
                "the LLM provider is marked down until {until} after {} failed requests in a row (last: {error}); \
                 it is not called until then",
                s.failures
            );
        }
    }

    /// A request the provider answered: the breaker closes.
    pub fn succeeded(&self) {
        let mut s = self.state.borrow_mut();
        if s.open_until.is_some() {
            tracing::info!("the LLM provider answered again; the breaker is closed");
        }
        *s = State { opened: s.opened, ..State::default() };
    }

    /// For `raven status`.
    pub fn health(&self, provider: &str) -> LlmHealth {
        let s = self.state.borrow();
        let state = match s.open_until {
            None => "closed",
            Some(until) if self.clock.now() < until => "open",
            Some(_) => "half_open",
        };
        LlmHealth {
            provider: provider.to_owned(),
            model: self.model.clone(),
            state: state.into(),
            failures: s.failures,
            threshold: self.threshold,
            open_until: s.open_until.map(|t| t.to_rfc3339()),
            opened: s.opened,
            last_error: s.last_error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::config::BreakerConfig;
    use chrono::TimeZone;

    fn http500() -> ProviderError {
        ProviderError::Http { status: 500, body: "boom".into(), retry_after: None }
    }

    #[test]
    fn opens_after_the_threshold_stays_open_for_its_time_then_one_probe_decides() {
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
        let b = Breaker::new(&BreakerConfig { failures: 3, open_s: 60 }, "m", clock.shared());
        for _ in 0..2 {
            b.failed(&http500());
            assert!(b.admit().is_ok());
        }
        b.failed(&http500());
        assert!(matches!(b.admit(), Err(ProviderError::Down { failures: 3, .. })));
        assert_eq!(b.health("openai").state, "open");
        clock.advance(chrono::Duration::seconds(61));
        assert!(b.admit().is_ok(), "the probe goes out");
        assert_eq!(b.health("openai").state, "half_open");
        b.failed(&http500());
        assert!(b.admit().is_err(), "a failed probe opens it again at once");
        clock.advance(chrono::Duration::seconds(61));
        b.succeeded();
        let h = b.health("openai");
        assert_eq!((h.state.as_str(), h.failures, h.opened), ("closed", 0, 2));
    }

    #[test]
    fn a_success_resets_the_count() {
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap());
        let b = Breaker::new(&BreakerConfig { failures: 2, open_s: 60 }, "m", clock.shared());
        b.failed(&http500());
        b.succeeded();
        b.failed(&http500());
        assert!(b.admit().is_ok());
    }
}
