//! The prompt budget (`llm.max_prompt_tokens`, 4,000 by default): every prompt rendered for a
//! model that reads it (the Planner and its daily analysis, task discovery, the heartbeat's
//! decision, the agent) is built within this many tokens, the system prompt and the tool
//! schemas included. What is kept, in this order, each part whole when it fits, else cut at a
//! line, else left out:
//!
//! 1. the frame: now in the user's zone, the gate's state and the last decision;
//! 2. the user's preferences (the `## Proactivity preferences` sections of MEMORY.md);
//! 3. deadlines and events due soon (open items of MEMORY.md overdue by at most a day or due
//!    within a week, soonest first; the calendar's events);
//! 4. the selected sections of attention.md;
//! 5. the recent conversation: the active sessions, then the newest lines of history.md;
//! 6. the fire history, the routines and the recent behaviour;
//! 7. the lines of MEMORY.md most relevant to now (see `planner::budget::memory`).
//!
//! Tokens are counted with the model's tokenizer where it is known (see [`count`]), else as
//! bytes/4. A provider that decides from the structured context (the embedded rules) renders
//! nothing and is not bounded.

pub mod conversation;
pub mod count;
pub mod fit;

pub use count::TokenCounter;

pub use crate::config::DEFAULT_MAX_PROMPT_TOKENS;

/// What a chat message costs beyond its text (role and separators), counted generously.
const PER_MESSAGE: usize = 8;

/// How many tokens a prompt may take, and how they are counted.
#[derive(Debug, Clone, Copy)]
pub struct PromptBudget {
    pub max_tokens: u32,
    pub counter: TokenCounter,
}

impl Default for PromptBudget {
    fn default() -> Self {
        PromptBudget { max_tokens: DEFAULT_MAX_PROMPT_TOKENS, counter: TokenCounter::Approx }
    }
}

impl PromptBudget {
    /// The budget for `model`, counted with its tokenizer when known.
    pub fn for_model(model: &str, max_tokens: u32) -> Self {
        PromptBudget { max_tokens, counter: TokenCounter::for_model(model) }
    }

    pub fn count(&self, text: &str) -> usize {
        self.counter.count(text)
    }

    /// What is left for the rest of a prompt once `fixed` texts (the system prompt, each tool
    /// schema as JSON) and `messages` messages are paid for.
    pub fn left_after<'a>(&self, fixed: impl IntoIterator<Item = &'a str>, messages: usize) -> usize {
        let spent: usize = fixed.into_iter().map(|t| self.count(t)).sum::<usize>() + messages * PER_MESSAGE;
        (self.max_tokens as usize).saturating_sub(spent)
    }

    /// `text` cut to its first lines that fit in `allowance` tokens.
    pub fn first_lines(&self, text: &str, allowance: usize) -> String {
        if self.count_within(text, allowance) {
            return text.to_owned();
        }
        let mut f = fit::Fitter::new(self.counter, allowance);
        f.part("", text.lines(), fit::Keep::First);
        f.finish()
    }

    /// Whether `text` surely takes at most `allowance` tokens, without tokenizing megabytes: a
    /// text of more than 8 bytes a token is taken as over (it is then fitted line by line).
    pub fn count_within(&self, text: &str, allowance: usize) -> bool {
        text.len() <= allowance.saturating_mul(8) && self.count(text) <= allowance
    }
}
