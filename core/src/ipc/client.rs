use super::{pid_of, IpcError};
use interprocess::local_socket::tokio::{prelude::*, Stream};
use interprocess::local_socket::GenericFilePath;
use raven_proto::control::{ClientFrame, ControlRequest, ControlResponse, ServerFrame};
use raven_proto::wire::{self, FrameDecoder, Hello, MAX_FRAME};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A connection to the supervisor's control socket.
pub struct ControlClient {
    stream: Stream,
    path: PathBuf,
    decoder: FrameDecoder,
    next_id: u64,
    server: Hello,
    /// Events pushed while waiting for a response.
    pub events: Vec<String>,
}

impl ControlClient {
    pub async fn connect(path: &Path) -> Result<ControlClient, IpcError> {
        let io = |source| IpcError::Io { path: path.to_owned(), source };
        let name = path.to_fs_name::<GenericFilePath>().map_err(io)?;
        let stream = Stream::connect(name).await.map_err(io)?;
        let mut c = ControlClient {
            stream,
            path: path.to_owned(),
            decoder: FrameDecoder::new(MAX_FRAME),
            next_id: 0,
            server: Hello::new(""),
            events: Vec::new(),
        };
        c.send_raw(
            &wire::encode_frame(&Hello::new(format!("raven client pid={}", std::process::id())), MAX_FRAME)
                .map_err(|e| c.protocol(e))?,
        )
        .await?;
        let body = c.next_body().await?;
        let hello: Hello = wire::decode_body(&body).map_err(|e| c.protocol(e))?;
        hello.check().map_err(|e| c.protocol(e))?;
        c.server = hello;
        Ok(c)
    }

    pub fn server_pid(&self) -> Option<u32> {
        pid_of(&self.server.peer)
    }

    fn protocol(&self, e: impl std::fmt::Display) -> IpcError {
        IpcError::Protocol { path: self.path.clone(), message: e.to_string() }
    }

    /// Raw bytes, for tests of a hostile peer.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), IpcError> {
        let path = self.path.clone();
        (&self.stream).write_all(bytes).await.map_err(|source| IpcError::Io { path, source })
    }

    async fn next_body(&mut self) -> Result<Vec<u8>, IpcError> {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if let Some(body) = self.decoder.next_body().map_err(|e| self.protocol(e))? {
                return Ok(body);
            }
            let n = (&self.stream)
                .read(&mut buf)
                .await
                .map_err(|source| IpcError::Io { path: self.path.clone(), source })?;
            if n == 0 {
                return Err(self.protocol("the supervisor closed the connection"));
            }
            self.decoder.push(&buf[..n]);
        }
    }

    pub async fn request(&mut self, request: ControlRequest) -> Result<ControlResponse, IpcError> {
        self.next_id += 1;
        let id = self.next_id;
        let frame = wire::encode_frame(&ClientFrame { id, request }, MAX_FRAME).map_err(|e| self.protocol(e))?;
        self.send_raw(&frame).await?;
        loop {
            let body = self.next_body().await?;
            match wire::decode_body::<ServerFrame>(&body).map_err(|e| self.protocol(e))? {
                ServerFrame::Response { id: got, response } if got == id => return Ok(response),
                ServerFrame::Response { .. } => continue,
                ServerFrame::Event { text } => self.events.push(text),
                ServerFrame::Deliver { id, .. } => {
                    tracing::warn!(id, "a delivery pushed to a plain client is ignored")
                }
            }
        }
    }
}

/// A connection that takes requests concurrently and receives pushed events (an attached
/// REPL): a reader task hands each response to its waiting request and each event to the
/// event channel.
pub struct DuplexClient {
    stream: std::rc::Rc<Stream>,
    path: PathBuf,
    next_id: std::cell::Cell<u64>,
    waiting: Waiting,
    /// One writer at a time: a frame is written whole before the next one starts (a write
    /// that yields halfway must not let another request's bytes in).
    write_lock: tokio::sync::Mutex<()>,
}

type Waiting =
    std::rc::Rc<std::cell::RefCell<std::collections::HashMap<u64, tokio::sync::oneshot::Sender<ControlResponse>>>>;

/// What the server pushes on a duplex connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    Event(String),
    /// For a gateway hosting the channel: deliver, then answer `Delivered { id }`.
    Deliver {
        id: u64,
        text: raven_proto::OutboundText,
    },
}

impl ControlClient {
    /// Splits the connection: requests (any number at once) through the returned client,
    /// what the server pushes through the receiver (which ends with the connection). Ask
    /// for pushes with `Subscribe` or `HostOutlets`.
    pub fn into_duplex(mut self) -> (DuplexClient, tokio::sync::mpsc::UnboundedReceiver<Pushed>) {
        let (events, rx) = tokio::sync::mpsc::unbounded_channel();
        for e in self.events.drain(..) {
            let _ = events.send(Pushed::Event(e));
        }
        let stream = std::rc::Rc::new(self.stream);
        let waiting: Waiting = Default::default();
        let (reader, w, mut decoder) = (stream.clone(), waiting.clone(), self.decoder);
        actix_rt::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                while let Ok(Some(body)) = decoder.next_body() {
                    match wire::decode_body::<ServerFrame>(&body) {
                        Ok(ServerFrame::Event { text }) => {
                            let _ = events.send(Pushed::Event(text));
                        }
                        Ok(ServerFrame::Deliver { id, text }) => {
                            let _ = events.send(Pushed::Deliver { id, text });
                        }
                        Ok(ServerFrame::Response { id, response }) => {
                            if let Some(tx) = w.borrow_mut().remove(&id) {
                                let _ = tx.send(response);
                            }
                        }
                        Err(e) => {
                            tracing::warn!("control socket: a frame from the supervisor did not decode: {e}");
                            w.borrow_mut().clear();
                            return;
                        }
                    }
                }
                match (&*reader).read(&mut buf).await {
                    Ok(n) if n > 0 => decoder.push(&buf[..n]),
                    // Closed: dropping the waiters fails their requests.
                    _ => {
                        w.borrow_mut().clear();
                        return;
                    }
                }
            }
        });
        let client = DuplexClient {
            stream,
            path: self.path,
            next_id: std::cell::Cell::new(self.next_id),
            waiting,
            write_lock: tokio::sync::Mutex::new(()),
        };
        (client, rx)
    }
}

impl DuplexClient {
    pub async fn request(&self, request: ControlRequest) -> Result<ControlResponse, IpcError> {
        let protocol = |m: &str| IpcError::Protocol { path: self.path.clone(), message: m.to_owned() };
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        let frame =
            wire::encode_frame(&ClientFrame { id, request }, MAX_FRAME).map_err(|e| protocol(&e.to_string()))?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.waiting.borrow_mut().insert(id, tx);
        let written = {
            let _one_writer = self.write_lock.lock().await;
            (&*self.stream).write_all(&frame).await
        };
        written.map_err(|source| IpcError::Io { path: self.path.clone(), source })?;
        rx.await.map_err(|_| protocol("the supervisor closed the connection"))
    }
}
