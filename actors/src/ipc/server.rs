use super::limits::{Slot, Slots, HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, MAX_IN_FLIGHT};
use super::{supervisor_peer, IpcError};
use futures_util::future::LocalBoxFuture;
use interprocess::local_socket::tokio::{prelude::*, Listener, Stream};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use raven_proto::control::{ClientFrame, ControlRequest, ControlResponse, ServerFrame};
use raven_proto::wire::{self, FrameDecoder, Hello, WireError, MAX_FRAME};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// Whether the peer runs as `owner` (checked where the platform reports it; the socket's
/// 0600 mode is the first fence).
pub(crate) fn peer_allowed(stream: &Stream, owner: Option<u32>) -> Result<(), String> {
    let Some(owner) = owner else { return Ok(()) };
    match stream.peer_creds().ok().and_then(|c| c.euid()) {
        Some(uid) if uid != owner => Err(format!("peer uid {uid} is not the owner {owner}")),
        _ => Ok(()),
    }
}

/// The longest pause of the accept loop after a failed accept.
const ACCEPT_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// Accepts connections for the life of the process; each is served on its own local task.
/// A failed accept (out of descriptors, say, while a client holds thousands of connections)
/// pauses the loop, 10 ms doubling up to a second, and it goes on: once the descriptors are
/// back, so is the socket. `path` is the socket's path (its owner is the only uid served).
pub async fn serve(listener: Listener, handler: Rc<dyn ControlHandler>, path: std::path::PathBuf) {
    let owner = owner_uid(&path);
    let slots = Rc::new(Slots::default());
    let mut refused = 0u64;
    let mut backoff = crate::supervise::backoff::Backoff::new(std::time::Duration::from_millis(10), ACCEPT_BACKOFF_MAX);
    loop {
        match listener.accept().await {
            Ok(stream) => {
                backoff.reset();
                if let Err(why) = peer_allowed(&stream, owner) {
                    tracing::warn!("control connection refused: {why}");
                    continue;
                }
                let Some(slot) = slots.admit() else {
                    refused += 1;
                    if refused.is_power_of_two() {
                        tracing::warn!("control connection refused: too many connections are open ({refused} so far)");
                    }
                    continue;
                };
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

/// Frames waiting to be written per connection: responses wait for room, events come
/// through their own bounded queue (see `EventBus`).
const OUT_QUEUE: usize = 64;

/// One connection: requests are read in order and each is served on its own task (so a
/// long turn does not hold up the answer to an ask_user question, nor the pushed events);
/// one writer task sends responses and events in the order they are ready.
async fn connection(stream: Stream, handler: Rc<dyn ControlHandler>, slot: Slot) -> Result<(), Closed> {
    let stream = Rc::new(stream);
    let (out, mut queue) = tokio::sync::mpsc::channel::<ServerFrame>(OUT_QUEUE);
    let writer_stream = stream.clone();
    let writer = actix_rt::spawn(async move {
        while let Some(frame) = queue.recv().await {
            let bytes = match wire::encode_frame(&frame, MAX_FRAME) {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!("a frame for a control client could not be encoded: {e}");
                    continue;
                }
            };
            if (&*writer_stream).write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    let result = read_requests(&stream, handler, out, &slot).await;
    // The peer is gone or misbehaved: stop writing, which also ends the event and delivery
    // forwarders of this connection (so a hosted outlet is known to be gone at once).
    writer.abort();
    result
}

/// Why a connection ended early.
#[derive(Debug, thiserror::Error)]
enum Closed {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("no handshake within {0:?}")]
    Handshake(std::time::Duration),
    #[error("idle for {0:?} with nothing in flight")]
    Idle(std::time::Duration),
    #[error("too many connections are open; a kept slot is for a client that subscribes or hosts outlets")]
    Full,
}

impl From<std::io::Error> for Closed {
    fn from(e: std::io::Error) -> Self {
        Closed::Wire(WireError::Io(e))
    }
}

async fn read_requests(
    stream: &Stream,
    handler: Rc<dyn ControlHandler>,
    out: tokio::sync::mpsc::Sender<ServerFrame>,
    slot: &Slot,
) -> Result<(), Closed> {
    let mut reader = stream;
    let mut decoder = FrameDecoder::new(MAX_FRAME);
    let mut buf = vec![0u8; 16 * 1024];
    let mut greeted = false;
    // Subscribed or hosting: never idle-timed-out.
    let mut long_lived = false;
    let in_flight = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
    loop {
        // Every complete frame first; then read more.
        while let Some(body) = decoder.next_body()? {
            if !greeted {
                let hello: Hello = wire::decode_body(&body)?;
                hello.check()?;
                let mut w = stream;
                w.write_all(&wire::encode_frame(&Hello::new(supervisor_peer()), MAX_FRAME)?).await?;
                greeted = true;
                continue;
            }
            let frame: ClientFrame = wire::decode_body(&body)?;
            let out = out.clone();
            let opens_long_lived =
                matches!(frame.request, ControlRequest::Subscribe | ControlRequest::HostOutlets { .. });
            if slot.kept() && !long_lived && !opens_long_lived {
                let response = ControlResponse::Error { message: Closed::Full.to_string() };
                let _ = out.send(ServerFrame::Response { id: frame.id, response }).await;
                return Err(Closed::Full);
            }
            long_lived |= opens_long_lived;
            if frame.request == ControlRequest::Subscribe {
                let response = match handler.subscribe() {
                    Some(mut events) => {
                        let forward = out.clone();
                        actix_rt::spawn(async move {
                            loop {
                                let text = tokio::select! {
                                    t = events.recv() => match t { Some(t) => t, None => return },
                                    _ = forward.closed() => return,
                                };
                                if forward.send(ServerFrame::Event { text }).await.is_err() {
                                    return;
                                }
                            }
                        });
                        ControlResponse::Subscribed
                    }
                    None => ControlResponse::Error { message: "this server pushes no events".into() },
                };
                let _ = out.send(ServerFrame::Response { id: frame.id, response }).await;
                continue;
            }
            if let ControlRequest::HostOutlets { channels } = &frame.request {
                let response = match handler.host_outlets(channels) {
                    Some(mut deliveries) => {
                        let forward = out.clone();
                        actix_rt::spawn(async move {
                            loop {
                                let (id, text) = tokio::select! {
                                    d = deliveries.recv() => match d { Some(d) => d, None => return },
                                    _ = forward.closed() => return,
                                };
                                if forward.send(ServerFrame::Deliver { id, text }).await.is_err() {
                                    return;
                                }
                            }
                        });
                        ControlResponse::Hosting
                    }
                    None => ControlResponse::Error { message: "no outlets to host here".into() },
                };
                let _ = out.send(ServerFrame::Response { id: frame.id, response }).await;
                continue;
            }
            // At most MAX_IN_FLIGHT at once: past that, this connection is not read until one
            // is answered (and its answer queued).
            let Ok(permit) = in_flight.clone().acquire_owned().await else { return Ok(()) };
            let pending = handler.handle(frame.request);
            actix_rt::spawn(async move {
                let response = pending.await;
                let _ = out.send(ServerFrame::Response { id: frame.id, response }).await;
                drop(permit);
            });
        }
        let quiet = in_flight.available_permits() == MAX_IN_FLIGHT;
        let limit = match (greeted, long_lived) {
            (false, _) => Some((HANDSHAKE_TIMEOUT, Closed::Handshake as fn(_) -> _)),
            (true, false) if quiet => Some((IDLE_TIMEOUT, Closed::Idle as fn(_) -> _)),
            _ => None,
        };
        let n = match limit {
            Some((wait, why)) => match tokio::time::timeout(wait, reader.read(&mut buf)).await {
                Ok(read) => read?,
                Err(_) => return Err(why(wait)),
            },
            None => reader.read(&mut buf).await?,
        };
        if n == 0 {
            return if decoder.buffered() == 0 { Ok(()) } else { Err(WireError::Truncated.into()) };
        }
        decoder.push(&buf[..n]);
    }
}
