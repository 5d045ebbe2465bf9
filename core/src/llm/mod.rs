//! The model behind the Planner, the agent and the heartbeat: the [`provider::Provider`]
//! trait, the OpenAI-compatible client (`openai`), the pinned generation values (`params`),
//! the decorators that wrap a provider (retries, the breaker, token accounting), the daily
//! token budget and the prompt budget. Nothing here knows what a prompt is for.

pub mod accounted;
pub mod breaker;
pub mod budget;
pub mod daily_tokens;
pub mod decorator;
pub mod openai;
pub mod params;
pub mod provider;
pub mod retry;
pub mod retrying;
pub mod usage;
