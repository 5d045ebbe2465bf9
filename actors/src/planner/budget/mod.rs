//! The Planner's and the agent's prompts within the prompt budget ([`crate::llm::budget`]):
//! the Planner's context rendered part by part (`planner`), and the lines of MEMORY.md most
//! relevant to now (`memory`).

pub(crate) mod memory;
pub(crate) mod planner;
