//! The HTTP gateway (`raven gateway`): the channels that face the outside. `POST /inbound`
//! (the webhook channel) turns a message into a USER turn on the supervisor; `GET /metrics`
//! serves the supervisor's metrics; `POST /feedback` and `POST /tap/<token>` record verdicts;
//! `GET /health` says who answers. The handlers ask the supervisor through a [`Supervisor`]
//! ([`ControlSocket`]: a new connection per request, so a restarted supervisor is simply found
//! again). The gateway also hosts the outbound outlets (jsonl, webhook) and the chat channels
//! of `[channels.*]`: the supervisor's DeliveryHub hands it each delivery for them over one
//! long-lived connection, re-made when the supervisor restarts.

mod app;
mod channels;
mod feedback;
mod inbound;
mod limits;
mod observe;
mod orphan;
mod outlets;
mod secret;
mod serve;
mod slots;
mod supervisor;
mod tap;
#[cfg(test)]
mod tests;
mod turn;

pub use supervisor::{ControlSocket, Supervisor, SupervisorError};

use crate::channels::taps::{TapError, TapLinks};
use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::engine::StartError;
use crate::feedback::NudgeFeedbackTracker;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Why the gateway cannot start or go on.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Its address cannot be listened on (taken, say).
    #[error("cannot listen on {listen}: {source}")]
    CannotListen {
        listen: String,
        #[source]
        source: std::io::Error,
    },
    /// Its listener's address, or the file that says it, cannot be had.
    #[error(transparent)]
    Io(std::io::Error),
    /// The signed feedback links cannot be opened.
    #[error(transparent)]
    Taps(#[from] TapError),
    /// The outlets it hosts cannot be built.
    #[error(transparent)]
    Outlets(#[from] StartError),
}

/// How a gateway that serves stopped serving.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Started by a supervisor, it had none for `orphan_timeout_s`.
    Orphaned,
    /// Its accept loop ended.
    Stopped,
}

/// A gateway of one data dir, ready to listen.
pub struct Gateway {
    dir: DataDir,
    config: RavenConfig,
    shared: Arc<app::Shared>,
    limits: limits::Limits,
}

/// The gateway's bound listener.
pub struct Listening {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Listening {
    /// Where it listens (port 0 in the config picks one).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Gateway {
    /// The gateway `config` describes, asking `supervisor`; its secret is read from the
    /// `gateway.secret_env` variable.
    pub fn open(dir: &DataDir, config: RavenConfig, supervisor: Arc<dyn Supervisor>) -> Result<Gateway, GatewayError> {
        let g = &config.gateway;
        let secret = std::env::var(&g.secret_env).ok().filter(|s| !s.is_empty());
        // Not a warning: most users never POST to the gateway (the chat channels and the taps
        // need no secret); the 503 says it to the one who does (RAVEN_LOG=info shows it here).
        if secret.is_none() {
            tracing::info!("no {} set: POST /inbound and /feedback answer 503 until one is", g.secret_env);
        }
        // A verdict from a button, a reaction, a tap or POST /feedback is journaled like one
        // given anywhere else: `raven log` and `raven why` show it.
        let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), config.general.timezone);
        let tracker = tracker.with_journal(crate::journal::Journal::in_data_dir(dir));
        let feedback =
            Arc::new(feedback::Feedback { tracker, verdicts: crate::cron::later::Verdicts::of(dir, &config) });
        let taps = TapLinks::open(dir)?;
        let shared = Arc::new(app::Shared { supervisor, secret, metrics_public: g.metrics_public, feedback, taps });
        let limits = limits::Limits {
            max_connections: g.max_connections,
            header_timeout: Duration::from_secs(g.header_timeout_s),
            body_timeout: Duration::from_secs(g.body_timeout_s),
            max_body_bytes: g.max_body_bytes,
        };
        Ok(Gateway { dir: dir.clone(), config, shared, limits })
    }

    /// Binds `gateway.listen` and writes "<address> <pid>" to the data dir's `gateway.addr`:
    /// where to reach it, and which process it is.
    pub async fn listen(&self) -> Result<Listening, GatewayError> {
        let listen = &self.config.gateway.listen;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|source| GatewayError::CannotListen { listen: listen.clone(), source })?;
        let addr = listener.local_addr().map_err(GatewayError::Io)?;
        let line = format!("{addr} {}", std::process::id());
        crate::store::write_atomic(&self.dir.gateway_addr(), line.as_bytes()).map_err(GatewayError::Io)?;
        Ok(Listening { listener, addr })
    }

    /// Starts the chat channels and the hosted outlets, and serves HTTP on `listening`. Started
    /// by a supervisor (see [`crate::process`]), it ends once no supervisor has answered for
    /// `orphan_timeout_s`.
    pub async fn serve(self, listening: Listening) -> Result<Ended, GatewayError> {
        let (dir, config) = (&self.dir, &self.config);
        let orphan = std::env::var_os(crate::process::SUPERVISED).map(|_| {
            let timeout = Duration::from_secs(config.gateway.orphan_timeout_s.max(1));
            orphan::orphaned(dir.socket(), timeout)
        });
        let chats = channels::start(dir, config, self.shared.supervisor.clone(), self.shared.feedback.clone());
        let hosted = outlets::Hosted::of(dir, config, chats)?;
        let _watch = hosted.follow_config(dir);
        if !hosted.is_empty() {
            actix_rt::spawn(outlets::host(dir.socket(), hosted));
        }
        let serving = serve::serve(listening.listener, app::app(self.shared.clone(), self.limits), self.limits);
        let Some(orphan) = orphan else {
            serving.await;
            return Ok(Ended::Stopped);
        };
        tokio::select! {
            () = serving => Ok(Ended::Stopped),
            () = orphan => Ok(Ended::Orphaned),
        }
    }
}
