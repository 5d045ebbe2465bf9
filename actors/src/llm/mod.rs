//! The model behind the Planner, the agent and the heartbeat: the [`provider::Provider`]
//! trait, the OpenAI-compatible client (`openai`), the pinned generation values (`params`),
//! the decorators that wrap a provider (retries, the breaker, token accounting), the daily
//! token budget and the prompt budget. Nothing here knows what a prompt is for.

pub mod accounted;
pub mod breaker;
pub mod budget;
pub mod daily_tokens;
pub mod openai;
pub mod params;
pub mod provider;
pub mod retry;
pub mod retrying;
pub mod usage;

use raven_proto::Origin;

tokio::task_local! {
    /// The origin of the turn running in this lane task: the cron tool refuses CRON turns,
    /// and the accounting names the caller of a model call by it.
    pub static TURN_ORIGIN: Origin;
}
