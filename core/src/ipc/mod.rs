//! The control socket (`<data dir>/raven.sock`): a local socket (interprocess), mode 0600
//! in a 0700 dir, framed bincode from `raven_proto::wire` with the version handshake first.
//! A garbage, truncated or oversized frame closes only that connection, with a logged
//! reason; the server keeps serving everyone else. A socket file left by a killed
//! supervisor is detected (nothing answers) and replaced; a live one is reported with its pid.

mod client;
mod connection;
mod events;
pub mod limits;
mod server;
pub mod single;

pub use client::{ControlClient, DuplexClient, Pushed};
pub use events::{EventBus, EVENT_QUEUE};
pub use interprocess::local_socket::tokio::Listener;
pub use server::{bind, serve, ControlHandler};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    #[error("already running (pid {pid}) on {path}")]
    AlreadyRunning { pid: u32, path: PathBuf },
    #[error("control socket {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("control socket {path}: {message}")]
    Protocol { path: PathBuf, message: String },
}

/// The `peer` text of a supervisor's handshake, which carries its pid.
pub fn supervisor_peer() -> String {
    format!("raven-supervisor pid={}", std::process::id())
}

fn pid_of(peer: &str) -> Option<u32> {
    peer.rsplit_once("pid=")?.1.trim().parse().ok()
}

#[cfg(test)]
mod tests;
