//! The wire: a u32 big-endian length prefix, then one bincode body.
//!
//! The length is checked against a hard maximum *before* anything is allocated for the
//! body, so a hostile or corrupt prefix (say 4 GiB) costs nothing but the connection.
//! Every failure is a [`WireError`] value; nothing here panics on input.

mod codec;

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{Read, Write};

/// Hard maximum body size of one frame (1 MiB).
pub const MAX_FRAME: usize = 1 << 20;
/// Bumped whenever a wire type changes shape.
pub const PROTOCOL_VERSION: u16 = 3;
/// First bytes of every handshake, so a stray client is told apart from an old one.
pub const MAGIC: [u8; 4] = *b"RVN\x01";

const PREFIX: usize = 4;

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("frame of {len} bytes exceeds the maximum of {max}")]
    TooLarge { len: usize, max: usize },
    #[error("frame could not be decoded: {0}")]
    Decode(String),
    #[error("frame could not be encoded: {0}")]
    Encode(String),
    #[error("{trailing} unexpected bytes after the frame body")]
    Trailing { trailing: usize },
    #[error("not a raven peer (bad handshake magic)")]
    BadMagic,
    #[error("protocol version mismatch: peer speaks {peer}, we speak {ours}")]
    VersionMismatch { peer: u16, ours: u16 },
    #[error("connection closed mid-frame")]
    Truncated,
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The first frame each side sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub magic: [u8; 4],
    pub version: u16,
    /// Free text naming the peer (`"raven repl 0.1.0"`), for logs.
    pub peer: String,
}

impl Hello {
    pub fn new(peer: impl Into<String>) -> Self {
        Hello { magic: MAGIC, version: PROTOCOL_VERSION, peer: peer.into() }
    }

    /// Accepts only our magic and our version.
    pub fn check(&self) -> Result<(), WireError> {
        if self.magic != MAGIC {
            return Err(WireError::BadMagic);
        }
        if self.version != PROTOCOL_VERSION {
            return Err(WireError::VersionMismatch { peer: self.version, ours: PROTOCOL_VERSION });
        }
        Ok(())
    }
}

/// Encodes `value` as one frame (prefix + body), refusing bodies over `max`.
pub fn encode_frame<T: Serialize>(value: &T, max: usize) -> Result<Vec<u8>, WireError> {
    let body = codec::encode(value)?;
    if body.len() > max {
        return Err(WireError::TooLarge { len: body.len(), max });
    }
    let mut out = Vec::with_capacity(PREFIX + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes one frame body (without its prefix). Trailing bytes are an error: a body is
/// exactly one value.
pub fn decode_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, WireError> {
    codec::decode(body)
}

fn checked_len(prefix: [u8; PREFIX], max: usize) -> Result<usize, WireError> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > max {
        return Err(WireError::TooLarge { len, max });
    }
    Ok(len)
}

/// Writes one frame to a blocking writer.
pub fn write_frame<T: Serialize>(w: &mut impl Write, value: &T, max: usize) -> Result<(), WireError> {
    w.write_all(&encode_frame(value, max)?)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame from a blocking reader. `Ok(None)` is a clean end of stream between
/// frames; an end inside a frame is [`WireError::Truncated`].
pub fn read_frame<T: DeserializeOwned>(r: &mut impl Read, max: usize) -> Result<Option<T>, WireError> {
    let mut prefix = [0u8; PREFIX];
    let mut got = 0;
    while got < PREFIX {
        match r.read(&mut prefix[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(WireError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let len = checked_len(prefix, max)?;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => WireError::Truncated,
        _ => WireError::Io(e),
    })?;
    decode_body(&body).map(Some)
}

/// Incremental decoder for non-blocking streams: push bytes as they arrive, pop frames.
/// Memory held is bounded by `max + 4` plus what one `push` hands over.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    max: usize,
}

impl FrameDecoder {
    pub fn new(max: usize) -> Self {
        FrameDecoder { buf: Vec::new(), max }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered and not yet returned as a frame.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next complete frame body, `Ok(None)` while incomplete. An oversized prefix is
    /// an error as soon as its four bytes are in: the body is never waited for.
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, WireError> {
        if self.buf.len() < PREFIX {
            return Ok(None);
        }
        let prefix = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
        let len = checked_len(prefix, self.max)?;
        if self.buf.len() < PREFIX + len {
            return Ok(None);
        }
        let body = self.buf[PREFIX..PREFIX + len].to_vec();
        self.buf.drain(..PREFIX + len);
        Ok(Some(body))
    }

    pub fn next_frame<T: DeserializeOwned>(&mut self) -> Result<Option<T>, WireError> {
        match self.next_body()? {
            Some(body) => decode_body(&body).map(Some),
            None => Ok(None),
        }
    }
}
