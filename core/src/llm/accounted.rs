//! Token accounting and the daily budget, around the provider: each call's usage (as the reply
//! reported it, riding the [`Answer`]; else its prompt counted by the budget's counter)
//! is added to the local day's spending in the data dir, counted in `raven_llm_tokens_total`
//! by role and kind, and journaled. Once `llm.daily_token_budget` is spent, the proactive
//! roles' calls fail at once with [`ProviderError::BudgetSpent`] (logged), so each degrades as
//! for any provider error: the Planner's tick skips (after its deadline fallback), a cron turn
//! delivers the job's own text, the heartbeat skips. The user's own turns are never refused.

use super::daily_tokens::DailyTokens;
use super::decorator::Decorator;
use super::provider::{Caller, CompletionRequest, ProviderError, SharedProvider};
use super::usage::{Answer, Usage};
use crate::clock::SharedClock;
use crate::journal::{Event, Journal, LlmUsage};
use crate::store::db::off_thread;
use futures_util::future::LocalBoxFuture;
use raven_proto::Origin;

pub struct Accounted {
    pub inner: SharedProvider,
    pub ledger: DailyTokens,
    /// Tokens a local day for the proactive roles; 0: no limit.
    pub budget: u64,
    pub clock: SharedClock,
    pub tz: chrono_tz::Tz,
    pub journal: Journal,
}

/// Who spends, for the ledger and the metrics, and whether the call is proactive (refused
/// once the day's budget is spent). An agent turn is the user's unless the engine started it.
pub fn role_of(caller: Caller) -> (&'static str, bool) {
    match caller {
        Caller::Planner => ("planner", true),
        Caller::Heartbeat => ("heartbeat", true),
        Caller::Other => ("other", true),
        Caller::Agent(Origin::User) => ("agent", false),
        Caller::Agent(_) => ("agent", true),
    }
}

impl Accounted {
    fn today(&self) -> chrono::NaiveDate {
        self.clock.now().with_timezone(&self.tz).date_naive()
    }

    /// `Err` when the call is proactive and the day's budget is spent.
    fn admit(&self, role: &str, proactive: bool) -> Result<(), ProviderError> {
        if !proactive || self.budget == 0 {
            return Ok(());
        }
        let spent = self.ledger.spent(self.today()).unwrap_or_else(|e| {
            tracing::warn!("the day's token spending is not read: {e}");
            0
        });
        if spent < self.budget {
            return Ok(());
        }
        let refused = ProviderError::BudgetSpent { spent, budget: self.budget };
        tracing::warn!(role, "{refused}");
        Err(refused)
    }

    /// Adds what the call cost to the day's spending, on a blocking thread (a peer holding the
    /// state database stalls no actor), and journals it.
    async fn record(&self, role: &'static str, usage: Usage) {
        let (ledger, today, tokens) = (self.ledger.clone(), self.today(), usage.total());
        let day_total = off_thread(move || ledger.add(today, role, tokens)).await.unwrap_or_else(|e| {
            tracing::warn!("the day's token spending is not kept: {e}");
            0
        });
        let line =
            LlmUsage { role: role.into(), prompt_tokens: usage.prompt, completion_tokens: usage.completion, day_total };
        self.journal.record(self.clock.now(), Some("llm"), Event::LlmUsage(line));
    }

    /// The call, admitted by the budget and recorded with what it cost (as the reply said,
    /// else its prompt counted); the answer goes on with the usage the backend said.
    async fn call(&self, req: &CompletionRequest) -> Answer {
        let (role, proactive) = role_of(req.generation.caller);
        if let Err(spent) = self.admit(role, proactive) {
            return Answer { reply: Err(spent), usage: None };
        }
        let answer = self.inner.answer(req).await;
        let cost = answer.usage.or_else(|| answer.reply.is_ok().then(|| self.estimated(req)));
        if let Some(u) = cost {
            self.record(role, u).await;
        }
        answer
    }

    /// A reply that said nothing of its usage: its prompt, counted as the budget counts.
    fn estimated(&self, req: &CompletionRequest) -> Usage {
        let budget = self.inner.prompt_budget();
        let prompt: usize = req.messages.iter().map(|m| budget.count(&m.content)).sum();
        Usage { prompt: prompt as u64, completion: 0 }
    }
}

impl Decorator for Accounted {
    fn inner(&self) -> &SharedProvider {
        &self.inner
    }

    fn around<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        Box::pin(self.call(req))
    }
}
