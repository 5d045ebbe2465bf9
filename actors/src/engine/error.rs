//! Why an engine did not start. Nothing has been sent when it fails; the command that
//! started it says why and exits.

use crate::llm::provider::ProviderError;
use crate::store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The data dir cannot be made or written.
    #[error("data dir {}: {source}", path.display())]
    DataDir { path: PathBuf, source: std::io::Error },
    /// The session files could not be moved to the current layout.
    #[error("session files {}: {source}", path.display())]
    Sessions { path: PathBuf, source: std::io::Error },
    /// The configured model endpoint cannot be used (a bad `llm.base_url`, say).
    #[error("llm provider: {0}")]
    Provider(#[from] ProviderError),
    /// An actor's state cannot be opened.
    #[error(transparent)]
    State(#[from] StoreError),
    /// The webhook outlet's HTTP client cannot be built.
    #[error(transparent)]
    Webhook(#[from] reqwest::Error),
}
