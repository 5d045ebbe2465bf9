//! A gateway a supervisor started outlives that supervisor's restart (the next one adopts it
//! and every connection is made anew), but not its absence: with no supervisor answering for
//! `orphan_timeout_s`, it leaves, so no orphan holds the port for ever.

use crate::ipc::{ControlClient, IpcError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Returns once no supervisor has been there for `timeout`. Absent means the control socket
/// is gone or refuses connections; a connection that fails otherwise (this process out of
/// descriptors under a flood, a supervisor at its connection cap) says nothing about it.
pub(super) async fn orphaned(socket: PathBuf, timeout: Duration) {
    let mut seen = Instant::now();
    loop {
        if !supervisor_absent(&socket).await {
            seen = Instant::now();
        } else if seen.elapsed() > timeout {
            return;
        }
        actix_rt::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn supervisor_absent(socket: &Path) -> bool {
    use std::io::ErrorKind::{ConnectionRefused, NotFound};
    match ControlClient::connect(socket).await {
        Ok(_) => false,
        Err(IpcError::Io { source, .. }) => matches!(source.kind(), NotFound | ConnectionRefused),
        Err(_) => false,
    }
}
