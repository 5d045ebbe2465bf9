//! Why a discovery run proposed nothing or its menu did not go out; the run's journal line
//! and the log say it in these words.

use crate::llm::provider::ProviderError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Model(#[from] ProviderError),
    /// The model answered without calling `propose_tasks`.
    #[error("the provider did not propose tasks: {0}")]
    NoProposal(String),
    #[error(transparent)]
    Options(#[from] OptionError),
    /// The menu was offered but not delivered, with the dispatcher's reason.
    #[error("{0}")]
    NotDelivered(String),
}

/// A malformed `propose_tasks` answer (refused whole, not skipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("propose_tasks: `options` must be an array")]
    NotAnArray,
    #[error("an option without a title")]
    NoTitle,
    #[error("a reply option without text")]
    NoText,
    #[error("a spawn option without a task")]
    NoTask,
    #[error("option kind {0:?}: reply or spawn")]
    Kind(Option<String>),
}
