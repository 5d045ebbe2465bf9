//! What an adapter keeps across restarts (Telegram's update offset, Matrix's sync token),
//! one JSON file a channel under `<data dir>/gateway/`, replaced atomically.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::PathBuf;

/// The state file of one channel.
#[derive(Debug, Clone)]
pub struct ChannelState {
    path: PathBuf,
}

impl ChannelState {
    pub fn new(dir: &crate::data_dir::DataDir, channel: &str) -> Self {
        ChannelState::at(dir.root().join("gateway").join(format!("{channel}.json")))
    }

    pub fn at(path: PathBuf) -> Self {
        ChannelState { path }
    }

    /// The saved state; a missing file is the default, an unreadable one is kept aside
    /// (`.bad`) and the default taken, with a warning.
    pub fn load<T: DeserializeOwned + Default>(&self) -> T {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return T::default(),
            Err(e) => {
                tracing::warn!("{} could not be read ({e}); starting afresh", self.path.display());
                return T::default();
            }
        };
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            let aside = self.path.with_extension("json.bad");
            tracing::warn!("{} is not readable ({e}); kept as {}", self.path.display(), aside.display());
            let _ = std::fs::rename(&self.path, &aside);
            T::default()
        })
    }

    pub fn save<T: Serialize>(&self, state: &T) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
        crate::store::write_atomic(&self.path, &bytes)
    }
}
