//! What the gateway's handlers ask of the supervisor, behind a trait: [`ControlSocket`] asks
//! the real one over the control socket, a new connection per request, so a restarted
//! supervisor is simply found again.

use crate::ipc::{ControlClient, IpcError};
use futures_util::future::BoxFuture;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::path::PathBuf;

/// The supervisor, as the gateway's handlers see it: one request, one answer.
pub trait Supervisor: Send + Sync {
    fn ask(&self, request: ControlRequest) -> BoxFuture<'_, Result<ControlResponse, SupervisorError>>;
}

/// Why the supervisor gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// No supervisor takes the connection (it is not running, or restarting).
    #[error(transparent)]
    Unreachable(IpcError),
    /// The connection was taken and the request failed on it.
    #[error(transparent)]
    Failed(IpcError),
}

/// The supervisor behind the data dir's control socket.
pub struct ControlSocket {
    path: PathBuf,
}

impl ControlSocket {
    pub fn new(path: impl Into<PathBuf>) -> ControlSocket {
        ControlSocket { path: path.into() }
    }
}

impl Supervisor for ControlSocket {
    fn ask(&self, request: ControlRequest) -> BoxFuture<'_, Result<ControlResponse, SupervisorError>> {
        Box::pin(async move {
            let mut c = ControlClient::connect(&self.path).await.map_err(SupervisorError::Unreachable)?;
            c.request(request).await.map_err(SupervisorError::Failed)
        })
    }
}
