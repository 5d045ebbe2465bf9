//! A provider that retries and keeps a breaker: each request first asks the [`Breaker`]; a
//! failure worth retrying (see [`retry`](super::retry)) is counted there and, while attempts and
//! the deadline allow, tried again after its wait, which goes through the engine's clock (a real
//! sleep in production, a step of the manual clock in tests and simulations).

use super::breaker::Breaker;
use super::decorator::Decorator;
use super::provider::{CompletionRequest, ProviderError, SharedProvider};
use super::retry::{retryable, Jitter, RetryPolicy};
use super::usage::{Answer, Usage};
use crate::clock::SharedClock;
use futures_util::future::LocalBoxFuture;
use std::cell::RefCell;
use std::time::Duration;

pub struct Retrying {
    inner: SharedProvider,
    policy: RetryPolicy,
    breaker: Breaker,
    clock: SharedClock,
    jitter: RefCell<Jitter>,
}

impl Retrying {
    /// `seed` fixes the jitter (the same seed, the same waits).
    pub fn new(inner: SharedProvider, policy: RetryPolicy, breaker: Breaker, clock: SharedClock, seed: u64) -> Self {
        Retrying { inner, policy, breaker, clock, jitter: RefCell::new(Jitter::new(seed)) }
    }

    /// Time spent on this call so far, by the engine's clock.
    fn spent(&self, since: chrono::DateTime<chrono::Utc>) -> Duration {
        (self.clock.now() - since).to_std().unwrap_or_default()
    }

    /// The wait before retry number `retry`, or `None` when no retry may follow: the attempts
    /// are spent, or the wait would end past the deadline.
    fn next_wait(&self, retry: u32, error: &ProviderError, since: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
        if retry >= self.policy.attempts {
            return None;
        }
        let wait = self.policy.wait(retry, error, &mut self.jitter.borrow_mut());
        (self.spent(since) + wait <= self.policy.deadline).then_some(wait)
    }

    /// The call, tried again while it fails in a way a retry may mend; the usage of every
    /// request made adds up in the answer.
    async fn call(&self, req: &CompletionRequest) -> Answer {
        let since = self.clock.now();
        let mut retry = 0;
        let mut usage = None;
        loop {
            if let Err(down) = self.breaker.admit() {
                return Answer { reply: Err(down), usage };
            }
            let answer = self.inner.answer(req).await;
            usage = Usage::sum(usage, answer.usage);
            let error = match answer.reply {
                Ok(reply) => {
                    self.breaker.succeeded();
                    return Answer { reply: Ok(reply), usage };
                }
                Err(e) if !retryable(&e) => return Answer { reply: Err(e), usage },
                Err(e) => e,
            };
            self.breaker.failed(&error);
            retry += 1;
            let Some(wait) = self.next_wait(retry, &error, since) else { return Answer { reply: Err(error), usage } };
            tracing::warn!("{error}; retry {retry} of {} in {wait:?}", self.policy.attempts - 1);
            self.clock.sleep(wait).await;
        }
    }
}

impl Decorator for Retrying {
    fn inner(&self) -> &SharedProvider {
        &self.inner
    }

    fn around<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        Box::pin(self.call(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::llm::provider::{Caller, Generation, Provider, ProviderReply};
    use chrono::TimeZone;
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// Answers what it was given, in order, and is called "scripted".
    struct Answers(RefCell<VecDeque<Answer>>);

    impl Provider for Answers {
        fn name(&self) -> &str {
            "scripted"
        }

        fn complete<'a>(
            &'a self,
            req: &'a CompletionRequest,
        ) -> LocalBoxFuture<'a, Result<crate::llm::provider::ProviderReply, ProviderError>> {
            Box::pin(async move { self.answer(req).await.reply })
        }

        fn answer<'a>(&'a self, _req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
            let next = self.0.borrow_mut().pop_front().expect("an answer left");
            Box::pin(std::future::ready(next))
        }
    }

    #[actix_rt::test]
    async fn a_retried_call_answers_the_usage_of_every_request_it_made_and_its_inner_provider_s_name() {
        let overloaded = ProviderError::Http { status: 503, body: "busy".into(), retry_after: None };
        let script = [
            Answer { reply: Err(overloaded), usage: Some(Usage { prompt: 10, completion: 0 }) },
            Answer { reply: Err(ProviderError::Timeout(100)), usage: None },
            Answer { reply: Ok(ProviderReply::Text("hi".into())), usage: Some(Usage { prompt: 12, completion: 3 }) },
        ];
        let clock = ManualClock::new(chrono::Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap());
        let policy = RetryPolicy {
            attempts: 3,
            backoff_initial: Duration::from_millis(10),
            backoff_max: Duration::from_millis(20),
            deadline: Duration::from_secs(60),
        };
        let breaker = Breaker::new(&crate::config::BreakerConfig::default(), "m", clock.shared());
        let inner: SharedProvider = Rc::new(Answers(RefCell::new(script.into())));
        let retrying = Retrying::new(inner, policy, breaker, clock.shared(), 7);
        let req = CompletionRequest {
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: None,
            generation: Generation { max_tokens: 10, temperature: 0.0, caller: Caller::Other },
            context: None,
        };
        let answer = retrying.answer(&req).await;
        assert_eq!(answer.reply, Ok(ProviderReply::Text("hi".into())));
        assert_eq!(answer.usage, Some(Usage { prompt: 22, completion: 3 }), "three requests, two said what they cost");
        assert_eq!(retrying.name(), "scripted", "a decorator goes by its inner provider's name");
    }
}
