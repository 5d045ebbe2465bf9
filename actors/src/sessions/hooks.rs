//! What the agent tells the floors below about a user's message, through traits they
//! implement: a hook that may answer it first (a menu pick, a feedback command, a reply to a
//! cron reminder), and the sink of the user's words (the routine learner's input).

use futures_util::future::LocalBoxFuture;
use raven_proto::TurnRequest;

/// A hook on genuine user input; it may consume the message (a menu pick, say) and answer.
pub trait InboundHook {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<Answer>>;
}

/// What a hook answered: what it did, or why it did nothing (input it could not take: a
/// time it could not read, an unknown id). Either is said to the user; a refusal also makes
/// `raven say` exit non-zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Done(String),
    Refused(String),
}

impl From<String> for Answer {
    fn from(text: String) -> Self {
        Answer::Done(text)
    }
}

/// Takes the user's messages that reach the agent (the routine learner's input).
pub trait HistorySink {
    fn record(&self, text: &str, at: chrono::DateTime<chrono::Utc>);
}
