//! The outage fallback: when the configured model cannot be reached (its breaker is open, or
//! it stayed unreachable, overloaded or rate limited through its retries), the embedded agent
//! answers the turn in its place: it handles what needs no model (`/remind`, a cron turn's
//! reminder) and says the model is unreachable for the rest. Once a turn has fallen back, its
//! later calls go to the embedded agent too: a model that just failed is not asked again
//! within the same turn.

use crate::llm::provider::{CompletionRequest, ProviderError, SharedProvider};
use crate::llm::retry::retryable;
use crate::llm::usage::{Answer, Usage};

/// Whether `e` means the model cannot answer now (rather than that the request or the reply
/// was wrong, which the embedded agent would not mend).
pub fn is_outage(e: &ProviderError) -> bool {
    matches!(e, ProviderError::Down { .. }) || retryable(e)
}

/// Who answers one turn's model calls: the model, until an outage hands the turn to the
/// embedded agent (when there is one).
pub struct TurnProvider<'a> {
    model: &'a SharedProvider,
    embedded: Option<&'a SharedProvider>,
    fallen_back: bool,
}

impl<'a> TurnProvider<'a> {
    pub fn new(model: &'a SharedProvider, embedded: Option<&'a SharedProvider>) -> Self {
        TurnProvider { model, embedded, fallen_back: false }
    }

    /// The call's answer, with what it cost: the model's, or the embedded agent's once the
    /// model is out (the model's failed requests may still have cost tokens).
    pub async fn answer(&mut self, req: &CompletionRequest) -> Answer {
        let Some(embedded) = self.embedded else { return self.model.answer(req).await };
        let mut spent = None;
        if !self.fallen_back {
            let answer = self.model.answer(req).await;
            match &answer.reply {
                Err(e) if is_outage(e) => {
                    tracing::warn!("the model cannot be reached ({e}); the embedded agent answers this turn");
                    self.fallen_back = true;
                    spent = answer.usage;
                }
                _ => return answer,
            }
        }
        let answer = embedded.answer(req).await;
        Answer { usage: Usage::sum(spent, answer.usage), ..answer }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::provider::{ChatMessage, Generation, Provider, ProviderReply};
    use crate::planner::rules::{RulesProvider, MODEL_DOWN};
    use futures_util::future::LocalBoxFuture;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A model that always fails with `error`, counting its calls.
    struct Failing {
        error: ProviderError,
        calls: Cell<u32>,
    }

    impl Provider for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn complete<'a>(
            &'a self,
            _: &'a CompletionRequest,
        ) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
            self.calls.set(self.calls.get() + 1);
            Box::pin(async move { Err(self.error.clone()) })
        }
    }

    fn said(text: &str) -> CompletionRequest {
        CompletionRequest {
            messages: vec![ChatMessage::system("turn origin: USER"), ChatMessage::user(text)],
            tools: Vec::new(),
            tool_choice: None,
            generation: Generation {
                max_tokens: 10,
                temperature: 0.0,
                caller: crate::llm::provider::Caller::Agent(raven_proto::Origin::User),
            },
            context: None,
        }
    }

    fn failing(error: ProviderError) -> Rc<Failing> {
        Rc::new(Failing { error, calls: Cell::new(0) })
    }

    #[actix_rt::test]
    async fn an_outage_hands_the_rest_of_the_turn_to_the_embedded_agent() {
        let down = ProviderError::Down { until: chrono::Utc::now(), failures: 5 };
        let model = failing(down);
        let (shared, embedded): (SharedProvider, SharedProvider) =
            (model.clone(), Rc::new(RulesProvider::new(chrono_tz::UTC).standing_in()));
        let mut turn = TurnProvider::new(&shared, Some(&embedded));
        assert_eq!(turn.answer(&said("how are you?")).await.reply, Ok(ProviderReply::Text(MODEL_DOWN.into())));
        assert_eq!(turn.answer(&said("still there?")).await.reply, Ok(ProviderReply::Text(MODEL_DOWN.into())));
        assert_eq!(model.calls.get(), 1, "the model is not asked again within the turn");
    }

    #[actix_rt::test]
    async fn only_an_outage_falls_back_and_without_a_stand_in_the_error_stays() {
        let unreachable = ProviderError::Transport("connection refused".into());
        let bad = ProviderError::Http { status: 400, body: "bad request".into(), retry_after: None };
        assert!(is_outage(&unreachable) && is_outage(&ProviderError::Timeout(1)));
        assert!(!is_outage(&bad) && !is_outage(&ProviderError::Decode("x".into())));
        let embedded: SharedProvider = Rc::new(RulesProvider::new(chrono_tz::UTC).standing_in());
        let model: SharedProvider = failing(bad.clone());
        assert_eq!(TurnProvider::new(&model, Some(&embedded)).answer(&said("hi")).await.reply, Err(bad));
        let model: SharedProvider = failing(unreachable.clone());
        assert_eq!(TurnProvider::new(&model, None).answer(&said("hi")).await.reply, Err(unreachable));
    }
}
