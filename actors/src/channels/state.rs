//! What an adapter keeps across restarts (Telegram's update offset, Matrix's sync token and
//! the access token of its login), one JSON file a channel under `<data dir>/gateway/`,
//! replaced atomically, readable by its owner only (0600, in a 0700 dir): it may hold a secret.

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

    /// Replaces the file with `state`, for its owner only, in a dir made private.
    pub fn save<T: Serialize>(&self, state: &T) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
            crate::data_dir::make_private(dir)?;
        }
        crate::store::write_atomic_private(&self.path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under any umask (022 is the usual one) the state, which may hold an access token, is
    /// the owner's alone.
    #[cfg(unix)]
    #[test]
    fn a_channel_s_state_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let state = ChannelState::new(&crate::data_dir::DataDir::new(tmp.path()), "matrix");
        state.save(&serde_json::json!({"access_token": "syt_x"})).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.path().join("gateway/matrix.json")), 0o600);
        assert_eq!(mode(&tmp.path().join("gateway")) & 0o077, 0, "the dir is private too");
    }
}
