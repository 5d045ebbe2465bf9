use super::{supervisor_peer, IpcError};
use futures_util::future::LocalBoxFuture;
use interprocess::local_socket::tokio::{prelude::*, Listener, Stream};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use raven_proto::control::{ClientFrame, ControlRequest, ControlResponse, ServerFrame};
use raven_proto::wire::{self, FrameDecoder, Hello, WireError, MAX_FRAME};
use std::path::Path;
use std::rc::Rc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Answers control requests (the engine implements it).
pub trait ControlHandler {
    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse>;
}

/// Binds the control socket at `path`, replacing a stale socket file, refusing a live one.
pub async fn bind(path: &Path) -> Result<Listener, IpcError> {
    let io = |source| IpcError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
        set_mode(dir, 0o700).map_err(io)?;
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

/// Whether the peer runs as `owner` (checked where the platform reports it; the socket's
/// 0600 mode is the first fence).
pub(crate) fn peer_allowed(stream: &Stream, owner: Option<u32>) -> Result<(), String> {
    let Some(owner) = owner else { return Ok(()) };
    match stream.peer_creds().ok().and_then(|c| c.euid()) {
        Some(uid) if uid != owner => Err(format!("peer uid {uid} is not the owner {owner}")),
        _ => Ok(()),
    }
}

/// Accepts connections until the listener fails; each is served on its own local task.
/// `path` is the socket's path (its owner is the only uid served).
pub async fn serve(listener: Listener, handler: Rc<dyn ControlHandler>, path: std::path::PathBuf) {
    let owner = owner_uid(&path);
    loop {
        match listener.accept().await {
            Ok(stream) => {
                if let Err(why) = peer_allowed(&stream, owner) {
                    tracing::warn!("control connection refused: {why}");
                    continue;
                }
                let h = handler.clone();
                actix_rt::spawn(async move {
                    if let Err(e) = connection(stream, h).await {
                        tracing::warn!("control connection closed: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::error!("control socket stopped accepting: {e}");
                return;
            }
        }
    }
}

async fn connection(stream: Stream, handler: Rc<dyn ControlHandler>) -> Result<(), WireError> {
    let mut reader = &stream;
    let mut writer = &stream;
    let mut decoder = FrameDecoder::new(MAX_FRAME);
    let mut buf = vec![0u8; 16 * 1024];
    let mut greeted = false;
    loop {
        // Every complete frame first; then read more.
        while let Some(body) = decoder.next_body()? {
            if !greeted {
                let hello: Hello = wire::decode_body(&body)?;
                hello.check()?;
                writer.write_all(&wire::encode_frame(&Hello::new(supervisor_peer()), MAX_FRAME)?).await?;
                greeted = true;
                continue;
            }
            let frame: ClientFrame = wire::decode_body(&body)?;
            let response = handler.handle(frame.request).await;
            let out = ServerFrame::Response { id: frame.id, response };
            writer.write_all(&wire::encode_frame(&out, MAX_FRAME)?).await?;
        }
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return if decoder.buffered() == 0 { Ok(()) } else { Err(WireError::Truncated) };
        }
        decoder.push(&buf[..n]);
    }
}
