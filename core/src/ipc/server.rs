//! The control socket's server: binding the socket, and accepting connections from its
//! owner's processes, each served by [`super::connection`].

use super::connection::{connection, Closed};
use super::limits::{Slot, Slots};
use super::IpcError;
use futures_util::future::LocalBoxFuture;
use interprocess::local_socket::tokio::{prelude::*, Listener, Stream};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use raven_proto::control::{ControlRequest, ControlResponse};
use std::path::Path;
use std::rc::Rc;

/// Answers control requests (the engine implements it).
pub trait ControlHandler {
    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse>;
    /// The events a `Subscribe` connection is pushed; `None`: this server pushes none.
    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<String>> {
        None
    }
    /// The deliveries for a gateway that hosts `channels`; `None`: nothing to host here.
    fn host_outlets(
        &self,
        _channels: &[String],
    ) -> Option<tokio::sync::mpsc::Receiver<(u64, raven_proto::OutboundText)>> {
        None
    }
}

/// Binds the control socket at `path`, replacing a stale socket file, refusing a live one.
pub async fn bind(path: &Path) -> Result<Listener, IpcError> {
    let io = |source| IpcError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
        crate::data_dir::make_private(dir).map_err(io)?;
    }
    if path.exists() {
        match super::ControlClient::connect(path).await {
            Ok(c) => return Err(IpcError::AlreadyRunning { pid: c.server_pid().unwrap_or(0), path: path.to_owned() }),
            Err(_) => {
                tracing::info!(path = %path.display(), "replacing a stale control socket (nothing answers on it)");
                std::fs::remove_file(path).map_err(io)?;
            }
        }
    }
    let name = path.to_fs_name::<GenericFilePath>().map_err(io)?;
    let listener = ListenerOptions::new().name(name).create_tokio().map_err(io)?;
    set_mode(path, 0o600).map_err(io)?;
    Ok(listener)
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The uid that owns the socket file: only its processes may talk to the supervisor.
fn owner_uid(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        std::fs::metadata(path).ok().map(|m| std::os::unix::fs::MetadataExt::uid(&m))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A peer that runs as another user than the socket's owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("peer uid {uid} is not the owner {owner}")]
pub(crate) struct NotTheOwner {
    uid: u32,
    owner: u32,
}

/// Whether the peer runs as `owner` (checked where the platform reports it; the socket's
/// 0600 mode is the first fence).
pub(crate) fn peer_allowed(stream: &Stream, owner: Option<u32>) -> Result<(), NotTheOwner> {
    let Some(owner) = owner else { return Ok(()) };
    match stream.peer_creds().ok().and_then(|c| c.euid()) {
        Some(uid) if uid != owner => Err(NotTheOwner { uid, owner }),
        _ => Ok(()),
    }
}

/// The longest pause of the accept loop after a failed accept.
const ACCEPT_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// Accepts connections for the life of the process; each is served on its own local task.
/// While every slot is taken it accepts none, so a burst of clients waits in the socket's
/// listen queue and each is served in turn.
/// A failed accept (out of descriptors, say, while a client holds thousands of connections)
/// pauses the loop, 10 ms doubling up to a second, and it goes on: once the descriptors are
/// back, so is the socket. `path` is the socket's path (its owner is the only uid served).
pub async fn serve(listener: Listener, handler: Rc<dyn ControlHandler>, path: std::path::PathBuf) {
    let owner = owner_uid(&path);
    let slots = Rc::new(Slots::default());
    let mut backoff = crate::supervise::backoff::Backoff::new(std::time::Duration::from_millis(10), ACCEPT_BACKOFF_MAX);
    loop {
        // With every slot taken, accept nothing: newer clients wait in the listen queue.
        slots.room().await;
        match listener.accept().await {
            Ok(stream) => {
                backoff.reset();
                if let Err(why) = peer_allowed(&stream, owner) {
                    tracing::warn!("control connection refused: {why}");
                    continue;
                }
                let slot = admitted(&slots).await;
                let h = handler.clone();
                actix_rt::spawn(async move {
                    match connection(stream, h, slot).await {
                        Err(e @ (Closed::Idle(_) | Closed::Handshake(_))) => {
                            tracing::info!("control connection closed: {e}")
                        }
                        Err(e) => tracing::warn!("control connection closed: {e}"),
                        Ok(()) => {}
                    }
                });
            }
            Err(e) => {
                if backoff.failures() == 0 {
                    tracing::error!("control socket cannot accept ({e}); retrying with a backoff");
                }
                actix_rt::time::sleep(backoff.next_wait()).await;
            }
        }
    }
}

/// A slot for a connection just accepted: free by now, but taken in between by a kept one
/// becoming ordinary, it waits for the next one.
async fn admitted(slots: &Rc<Slots>) -> Slot {
    loop {
        if let Some(slot) = slots.admit() {
            return slot;
        }
        slots.room().await;
    }
}
