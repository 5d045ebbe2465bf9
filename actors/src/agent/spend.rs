//! What a turn may spend: its tool-loop iterations (`agent.max_iterations`), and for a
//! micro-agent's run (a SUBAGENT turn) its own, smaller limits: `agent.subagent_max_iterations`
//! and `agent.subagent_max_tokens`, the tokens of its requests and replies as the provider
//! reports them (else its prompts as the budget counts them). A run whose tokens are spent
//! stops before its next request and says so.

use super::MicroLimits;
use crate::llm::budget::PromptBudget;
use crate::llm::provider::CompletionRequest;
use crate::llm::usage::Usage;
use raven_proto::Origin;

pub struct Spend {
    pub iterations: usize,
    /// Tokens the turn may spend (`None`: not counted).
    max_tokens: Option<u64>,
    spent: u64,
}

impl Spend {
    pub fn of(origin: Origin, max_iterations: usize, micro: MicroLimits) -> Self {
        if origin == Origin::Subagent {
            Spend { iterations: micro.max_iterations, max_tokens: Some(micro.max_tokens), spent: 0 }
        } else {
            Spend { iterations: max_iterations, max_tokens: None, spent: 0 }
        }
    }

    /// Adds one request's tokens: as reported, else its prompt as counted.
    pub fn add(&mut self, usage: Option<Usage>, req: &CompletionRequest, budget: &PromptBudget) {
        if self.max_tokens.is_none() {
            return;
        }
        self.spent += match usage {
            Some(u) => u.total(),
            None => req.messages.iter().map(|m| budget.count(&m.content) as u64).sum(),
        };
    }

    /// The answer a run ends with once its tokens are spent.
    pub fn exhausted(&self) -> Option<String> {
        let max = self.max_tokens?;
        (self.spent >= max).then(|| {
            format!("(stopped: this run spent {} of its {max} tokens, `agent.subagent_max_tokens`)", self.spent)
        })
    }
}
