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
            }
        }
    }
}
