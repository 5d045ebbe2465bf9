//! A provider that retries and keeps a breaker: each request first asks the [`Breaker`]; a
//! failure worth retrying (see [`retry`](super::retry)) is counted there and, while attempts and
//! the deadline allow, tried again after its wait, which goes through the engine's clock (a real
//! sleep in production, a step of the manual clock in tests and simulations).

use super::breaker::Breaker;
use super::provider::{CompletionRequest, Provider, ProviderError, ProviderReply, SharedProvider};
use super::retry::{retryable, Jitter, RetryPolicy};
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

    async fn call(&self, req: &CompletionRequest) -> Result<ProviderReply, ProviderError> {
        let since = self.clock.now();
        let mut retry = 0;
        loop {
            self.breaker.admit()?;
            let error = match self.inner.complete(req).await {
                Ok(reply) => {
                    self.breaker.succeeded();
                    return Ok(reply);
                }
                Err(e) if !retryable(&e) => return Err(e),
                Err(e) => e,
            };
            self.breaker.failed(&error);
            retry += 1;
            let Some(wait) = self.next_wait(retry, &error, since) else { return Err(error) };
            tracing::warn!("{error}; retry {retry} of {} in {wait:?}", self.policy.attempts - 1);
            self.clock.sleep(wait).await;
        }
    }
}

impl Provider for Retrying {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn reads_prompt(&self) -> bool {
        self.inner.reads_prompt()
    }

    fn prompt_budget(&self) -> crate::llm::budget::PromptBudget {
        self.inner.prompt_budget()
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(self.call(req))
    }
}
