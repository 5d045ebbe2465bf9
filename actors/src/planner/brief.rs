//! The morning brief in the model's words: the rules' draft (see [`crate::context::brief`])
//! rewritten warmly and briefly, in the draft's language, every numbered item kept with its
//! number (the buttons and `/later 2` name items by it), within the prompt budget. Without a
//! model the draft is the brief; a failed call, a draft over the budget or a reply that lost
//! an item keeps the draft too.

use super::{PlannerService, ProactivePlanner};
use crate::llm::provider::{Caller, ChatMessage, CompletionRequest, Generation, ProviderError, ProviderReply};
use crate::supervise::{LocalBoxFuture, Request, ServeAsync};

pub const BRIEF_PROMPT: &str = "You write the user's morning brief. Rewrite the draft below warmly and \
briefly, in the draft's language. Keep every numbered item, in the same order, each on its own line \
starting with its number and a dot (`1.`); add no item and no fact that is not in the draft; keep the \
last line's hint about replying. Answer with the message text only.";

/// Pinned, like the Planner's: a short message, a little warmth.
pub const BRIEF_GENERATION: Generation = Generation { max_tokens: 500, temperature: 0.3, caller: Caller::Planner };

/// Why the model's words were not used (the draft goes out instead).
#[derive(Debug, thiserror::Error)]
pub enum WordingError {
    #[error(transparent)]
    Model(#[from] ProviderError),
    #[error("the draft does not fit the prompt budget")]
    OverBudget,
    #[error("the model answered with a tool call, not a message")]
    NoText,
    #[error("the model's brief lost or added a numbered item")]
    ItemsChanged,
}

impl ProactivePlanner {
    /// The brief's words for `draft`, which has `items` numbered items.
    pub async fn word_brief(&self, draft: &str, items: usize) -> Result<String, WordingError> {
        if !self.provider.reads_prompt() {
            return Ok(draft.to_owned());
        }
        let budget = self.provider.prompt_budget();
        if !budget.count_within(draft, budget.left_after([BRIEF_PROMPT], 2)) {
            return Err(WordingError::OverBudget);
        }
        let req = CompletionRequest {
            messages: vec![ChatMessage::system(BRIEF_PROMPT), ChatMessage::user(draft)],
            tools: Vec::new(),
            tool_choice: None,
            generation: BRIEF_GENERATION,
            context: None,
        };
        match self.provider.complete(&req).await? {
            ProviderReply::Text(t) if keeps_items(&t, items) => Ok(t.trim().to_owned()),
            ProviderReply::Text(_) => Err(WordingError::ItemsChanged),
            _ => Err(WordingError::NoText),
        }
    }
}

/// Items 1 to `n` each start a line, and no item `n + 1` does.
fn keeps_items(text: &str, n: usize) -> bool {
    let numbered = |i: usize| text.lines().any(|l| l.trim_start().starts_with(&format!("{i}.")));
    (1..=n).all(numbered) && !numbered(n + 1)
}

/// The brief's words, for the Sentinel's runner.
pub struct WordBrief {
    pub draft: String,
    pub items: usize,
}

impl Request for WordBrief {
    type Reply = Result<String, WordingError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<WordBrief> for PlannerService {
    fn serve_async(&mut self, w: WordBrief) -> LocalBoxFuture<'static, Result<String, WordingError>> {
        let planner = self.planner.clone();
        Box::pin(async move { planner.word_brief(&w.draft, w.items).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::provider::Provider;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Answers every request with `reply`, keeping what it was asked.
    struct Writer {
        reply: String,
        asked: RefCell<Vec<String>>,
    }

    impl Provider for Writer {
        fn name(&self) -> &str {
            "writer"
        }

        fn complete<'a>(
            &'a self,
            req: &'a CompletionRequest,
        ) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
            self.asked.borrow_mut().push(req.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n"));
            let reply = self.reply.clone();
            Box::pin(async move { Ok(ProviderReply::Text(reply)) })
        }
    }

    const DRAFT: &str = "Good morning! Your day, Mon 2 Mar:\n1. Call the bank (is due at 15:00)\n\
                         Coming up:\n2. Pay the rent (is due tomorrow)\nFor one item: its buttons, or reply /later 1.";

    async fn worded(reply: &str) -> (Result<String, WordingError>, Vec<String>) {
        let writer = Rc::new(Writer { reply: reply.into(), asked: RefCell::default() });
        let planner = ProactivePlanner::new(writer.clone());
        let out = planner.word_brief(DRAFT, 2).await;
        let asked = writer.asked.borrow().clone();
        (out, asked)
    }

    #[actix_rt::test]
    async fn the_model_words_the_brief_from_the_draft_and_keeps_every_item() {
        let reply = "Morning! Two things today:\n1. Ring the bank before 15:00.\n2. The rent is due tomorrow.\nTap an item's buttons, or reply /later 1.";
        let (out, asked) = worded(reply).await;
        assert_eq!(out.unwrap(), reply);
        assert!(asked[0].starts_with(BRIEF_PROMPT) && asked[0].ends_with(DRAFT), "{asked:?}");
        let (lost, _) = worded("Morning! Call the bank at 15:00.").await;
        assert!(matches!(lost, Err(WordingError::ItemsChanged)), "{lost:?}");
        let (added, _) = worded("1. bank\n2. rent\n3. a walk").await;
        assert!(matches!(added, Err(WordingError::ItemsChanged)), "{added:?}");
    }

    #[actix_rt::test]
    async fn without_a_model_the_draft_is_the_brief() {
        let planner = ProactivePlanner::new(Rc::new(crate::planner::rules::RulesProvider::new(chrono_tz::Tz::UTC)));
        assert_eq!(planner.word_brief(DRAFT, 2).await.unwrap(), DRAFT);
    }
}
