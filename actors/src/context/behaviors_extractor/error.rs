//! Why an extraction pass, one session's extraction, or one event of the model's answer
//! failed. A person reads them in the log; nothing here is shown to the model.

use super::events::{MAX_KIND_CHARS, MAX_SUMMARY_CHARS};
use crate::llm::provider::ProviderError;
use std::path::PathBuf;

/// A failed pass (the sessions dir, the cursor file) or a failed session.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The cursor file does not parse: starting over would append every event twice.
    #[error("{} does not parse ({source}); fix or delete it to extract again", path.display())]
    Cursors { path: PathBuf, source: serde_json::Error },
    #[error("lock on behaviors.md: {0}")]
    Lock(std::io::Error),
    #[error("{0}: extracted by another process meanwhile; this answer is dropped")]
    Raced(String),
    #[error(transparent)]
    Encode(serde_json::Error),
    #[error(transparent)]
    Model(#[from] ProviderError),
    #[error("unexpected tool call `{0}`")]
    UnexpectedTool(String),
    #[error("no record_behaviors tool call")]
    NoToolCall,
    #[error(transparent)]
    Answer(#[from] AnswerError),
}

/// Why a `record_behaviors` call is refused as a whole.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("record_behaviors arguments have no `events` list: {0}")]
    NoList(String),
    #[error("record_behaviors returned {got} events, more than the {max} allowed")]
    TooMany { got: usize, max: usize },
    #[error("record_behaviors event {number}: {why}")]
    Event { number: usize, why: EventError },
}

/// Why one event of the answer is refused.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("`{0}` is missing or not a string")]
    Missing(&'static str),
    #[error("at `{0}` is not YYYY-MM-DD HH:MM")]
    At(String),
    #[error("kind `{0}` is not a slug of at most {MAX_KIND_CHARS} of a-z 0-9 _ -")]
    Kind(String),
    #[error("summary is empty")]
    EmptySummary,
    #[error("summary is longer than {MAX_SUMMARY_CHARS} characters")]
    LongSummary,
}
