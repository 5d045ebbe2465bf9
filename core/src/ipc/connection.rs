//! One connection of the control socket: the handshake, then requests read in order and each
//! served on its own task (so a long turn does not hold up the answer to an ask_user question,
//! nor the pushed events), with one writer task sending responses and pushed frames in the
//! order they are ready. Frames are read with tokio_util's `LengthDelimitedCodec`, set to the
//! framing of `raven_proto::wire`.

use super::limits::{Slot, HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, MAX_IN_FLIGHT};
use super::server::ControlHandler;
use super::supervisor_peer;
use interprocess::local_socket::tokio::Stream;
use raven_proto::control::{ClientFrame, ControlRequest, ControlResponse, ServerFrame};
use raven_proto::wire::{self, Hello, WireError, MAX_FRAME};
use std::ops::ControlFlow;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc::{Receiver, Sender};
use tokio::sync::Semaphore;
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, LengthDelimitedCodec, LengthDelimitedCodecError};

/// Frames waiting to be written per connection: responses wait for room, events come
/// through their own bounded queue (see `EventBus`).
const OUT_QUEUE: usize = 64;

/// A frame's length prefix: a u32, big-endian.
const PREFIX: usize = size_of::<u32>();

/// The most one read takes from the socket.
const READ_CHUNK: usize = 16 * 1024;

/// One connection: requests are read in order and each is served on its own task; one writer
/// task sends responses and events in the order they are ready.
pub(super) async fn connection(stream: Stream, handler: Rc<dyn ControlHandler>, slot: Slot) -> Result<(), Closed> {
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
pub(super) enum Closed {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("no handshake within {0:?}")]
    Handshake(Duration),
    #[error("idle for {0:?} with nothing in flight")]
    Idle(Duration),
}

impl From<std::io::Error> for Closed {
    fn from(e: std::io::Error) -> Self {
        Closed::Wire(WireError::Io(e))
    }
}

/// The hello first, then each request in turn, until the peer leaves or misbehaves.
async fn read_requests(
    stream: &Stream,
    handler: Rc<dyn ControlHandler>,
    out: Sender<ServerFrame>,
    slot: &Slot,
) -> Result<(), Closed> {
    let mut requests = Requests::new(stream, handler, out, slot);
    while let Some(body) = requests.next_body().await? {
        if !requests.greeted {
            requests.greet(&body).await?;
            continue;
        }
        let frame: ClientFrame = wire::decode_body(&body)?;
        if requests.serve(frame).await?.is_break() {
            break;
        }
    }
    Ok(())
}

/// How long a read may wait, and what closes the connection past it (`None`: no limit).
type ReadLimit = Option<(Duration, fn(Duration) -> Closed)>;

/// The framing `raven_proto::wire` writes: a u32 big-endian length prefix, then a body of at
/// most `MAX_FRAME` bytes; a longer prefix is refused as soon as its four bytes are in, before
/// the body is waited for. Each frame comes with its prefix (the length adjusted by it, nothing
/// skipped), so what is buffered always starts at a frame's first byte: what is left when the
/// peer leaves says whether it left mid-frame, and a refused prefix is still there to report.
fn wire_frames() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .length_field_type::<u32>()
        .big_endian()
        .max_frame_length(MAX_FRAME)
        .length_adjustment(PREFIX as isize)
        .num_skip(0)
        .new_codec()
}

/// The reading side of one connection, and what the connection has become: greeted,
/// long-lived (subscribed or hosting: never idle-timed-out), and its requests in flight.
struct Requests<'a> {
    stream: &'a Stream,
    frames: LengthDelimitedCodec,
    /// Read and not yet returned as a frame.
    buffered: BytesMut,
    chunk: Vec<u8>,
    handler: Rc<dyn ControlHandler>,
    out: Sender<ServerFrame>,
    slot: &'a Slot,
    greeted: bool,
    long_lived: bool,
    in_flight: Arc<Semaphore>,
}

impl<'a> Requests<'a> {
    fn new(stream: &'a Stream, handler: Rc<dyn ControlHandler>, out: Sender<ServerFrame>, slot: &'a Slot) -> Self {
        Requests {
            stream,
            frames: wire_frames(),
            buffered: BytesMut::new(),
            chunk: vec![0u8; READ_CHUNK],
            handler,
            out,
            slot,
            greeted: false,
            long_lived: false,
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }

    /// The next frame's body; `None` when the peer left between frames. Every complete frame
    /// first; then read more.
    async fn next_body(&mut self) -> Result<Option<BytesMut>, Closed> {
        loop {
            if let Some(mut frame) = self.frames.decode(&mut self.buffered).map_err(|e| self.refused(e))? {
                frame.advance(PREFIX);
                return Ok(Some(frame));
            }
            let limit = self.read_limit();
            let n = read_within(self.stream, &mut self.chunk, limit).await?;
            if n == 0 {
                return if self.buffered.is_empty() { Ok(None) } else { Err(WireError::Truncated.into()) };
            }
            self.buffered.extend_from_slice(&self.chunk[..n]);
        }
    }

    /// How long the next read may wait: the handshake timeout until the peer has said hello; the idle timeout for an ordinary
    /// connection with nothing in flight; else no limit.
    fn read_limit(&self) -> ReadLimit {
        let quiet = self.in_flight.available_permits() == MAX_IN_FLIGHT;
        match (self.greeted, self.long_lived) {
            (false, _) => Some((HANDSHAKE_TIMEOUT, Closed::Handshake as fn(_) -> _)),
            (true, false) if quiet => Some((IDLE_TIMEOUT, Closed::Idle as fn(_) -> _)),
            _ => None,
        }
    }

    /// What the codec refuses: a prefix over the maximum, still at the front of the buffer,
    /// reported with the length it declared.
    fn refused(&self, e: std::io::Error) -> Closed {
        if !e.get_ref().is_some_and(|inner| inner.is::<LengthDelimitedCodecError>()) {
            return e.into();
        }
        let len = self.buffered.get(..PREFIX).map_or(0, |mut prefix| prefix.get_u32() as usize);
        WireError::TooLarge { len, max: MAX_FRAME }.into()
    }

    /// The peer's hello checked, and ours written back.
    async fn greet(&mut self, body: &[u8]) -> Result<(), Closed> {
        let hello: Hello = wire::decode_body(body)?;
        hello.check()?;
        let mut w = self.stream;
        w.write_all(&wire::encode_frame(&Hello::new(supervisor_peer()), MAX_FRAME)?).await?;
        self.greeted = true;
        Ok(())
    }

    /// One request. A connection in a kept slot whose request neither subscribes nor hosts
    /// waits for an ordinary slot first; `Subscribe` and `HostOutlets` are answered here, and
    /// start pushing; any other goes to the handler. `Break`: read no more.
    async fn serve(&mut self, frame: ClientFrame) -> Result<ControlFlow<()>, Closed> {
        let opens_long_lived = matches!(frame.request, ControlRequest::Subscribe | ControlRequest::HostOutlets { .. });
        if !self.long_lived && !opens_long_lived {
            self.slot.become_ordinary().await;
        }
        self.long_lived |= opens_long_lived;
        let response = match &frame.request {
            ControlRequest::Subscribe => self.subscribe(),
            ControlRequest::HostOutlets { channels } => self.host_outlets(channels),
            _ => return Ok(self.dispatch(frame).await),
        };
        let _ = self.out.send(ServerFrame::Response { id: frame.id, response }).await;
        Ok(ControlFlow::Continue(()))
    }

    /// The handler's events, pushed from now on.
    fn subscribe(&self) -> ControlResponse {
        match self.handler.subscribe() {
            Some(events) => {
                forward(events, self.out.clone(), |text| ServerFrame::Event { text });
                ControlResponse::Subscribed
            }
            None => ControlResponse::Error { message: "this server pushes no events".into() },
        }
    }

    /// The deliveries for `channels`, pushed from now on.
    fn host_outlets(&self, channels: &[String]) -> ControlResponse {
        match self.handler.host_outlets(channels) {
            Some(deliveries) => {
                forward(deliveries, self.out.clone(), |(id, text)| ServerFrame::Deliver { id, text });
                ControlResponse::Hosting
            }
            None => ControlResponse::Error { message: "no outlets to host here".into() },
        }
    }

    /// The request handed to the handler, answered on its own task. At most MAX_IN_FLIGHT at
    /// once: past that, this connection is not read until one is answered (and its answer
    /// queued).
    async fn dispatch(&self, frame: ClientFrame) -> ControlFlow<()> {
        let Ok(permit) = self.in_flight.clone().acquire_owned().await else { return ControlFlow::Break(()) };
        let pending = self.handler.handle(frame.request);
        let out = self.out.clone();
        actix_rt::spawn(async move {
            let response = pending.await;
            let _ = out.send(ServerFrame::Response { id: frame.id, response }).await;
            drop(permit);
        });
        ControlFlow::Continue(())
    }
}

/// One read into `chunk`, closing the connection when `limit` passes first.
async fn read_within(mut stream: &Stream, chunk: &mut [u8], limit: ReadLimit) -> Result<usize, Closed> {
    match limit {
        Some((wait, why)) => match tokio::time::timeout(wait, stream.read(chunk)).await {
            Ok(read) => Ok(read?),
            Err(_) => Err(why(wait)),
        },
        None => Ok(stream.read(chunk).await?),
    }
}

/// Pushes what `from` yields to the connection's writer, as `frame` makes it, until either
/// ends.
fn forward<T: 'static>(mut from: Receiver<T>, out: Sender<ServerFrame>, frame: fn(T) -> ServerFrame) {
    actix_rt::spawn(async move {
        loop {
            let item = tokio::select! {
                item = from.recv() => match item { Some(item) => item, None => return },
                _ = out.closed() => return,
            };
            if out.send(frame(item)).await.is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codec_reads_what_the_wire_writes_even_a_byte_at_a_time() {
        let sent = [Hello::new("a"), Hello::new("b".repeat(1000))];
        let mut bytes = Vec::new();
        for hello in &sent {
            bytes.extend(wire::encode_frame(hello, MAX_FRAME).unwrap());
        }
        let (mut frames, mut buffered, mut got) = (wire_frames(), BytesMut::new(), Vec::new());
        for byte in bytes {
            buffered.extend_from_slice(&[byte]);
            while let Some(mut frame) = frames.decode(&mut buffered).unwrap() {
                frame.advance(PREFIX);
                got.push(wire::decode_body::<Hello>(&frame).unwrap());
            }
        }
        assert_eq!(got, sent);
        assert!(buffered.is_empty());
    }

    #[test]
    fn a_prefix_over_the_maximum_is_refused_at_once_and_one_at_it_waits_for_its_body() {
        let mut at_max = BytesMut::from(&(MAX_FRAME as u32).to_be_bytes()[..]);
        assert!(wire_frames().decode(&mut at_max).unwrap().is_none());
        assert_eq!(at_max.len(), PREFIX, "the prefix stays until its frame is whole");
        let mut over = BytesMut::from(&(MAX_FRAME as u32 + 1).to_be_bytes()[..]);
        let err = wire_frames().decode(&mut over).unwrap_err();
        assert!(err.get_ref().is_some_and(|e| e.is::<LengthDelimitedCodecError>()), "{err}");
        assert_eq!(over.len(), PREFIX, "the refused prefix is still there to report");
    }
}
