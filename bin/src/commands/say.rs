//! `raven say TEXT`: one user turn on an engine embedded in this process, through the spine
//! and the agent loop; the reply is printed. With no LLM configured the embedded agent
//! handles `/remind <when> <text>` (`in 1h 30m`, `at 6pm`, `tomorrow at 9`, `every weekday at
//! 9`) (jobs in `cron/jobs.json`). When a supervisor (`raven up`) runs on the data dir, the
//! message goes to it over the socket. `--at` is a dry run: an embedded engine takes the turn
//! at that time on a private copy of the data dir, and nothing is saved.

use super::load_config;
use super::tick::clock_at;
use crate::error::CliError;
use raven_actors::clock::SharedClock;
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::Engine;
use raven_actors::ipc::ControlClient;
use raven_actors::spine::TurnOutcome;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::TurnRequest;

pub fn run(dir: &DataDir, text: String, session: String, at: Option<String>) -> Result<(), CliError> {
    let config = load_config(dir)?;
    let dry = at.is_some();
    let clock = clock_at(at, &config)?;
    let (channel, chat_id) = raven_proto::split_target(&session);
    let req = TurnRequest::from_user(format!("say-{}", std::process::id()), channel, chat_id, text, clock.now());
    if dry {
        let copy = super::dry_run(dir)?;
        return embedded_turn(copy.dir(), &config, clock, req);
    }
    if let Some(result) = ask_supervisor(dir, req.clone()) {
        return result;
    }
    embedded_turn(dir, &config, clock, req)
}

/// The running supervisor's turn; `None` when none answers on the socket.
fn ask_supervisor(dir: &DataDir, req: TurnRequest) -> Option<Result<(), CliError>> {
    actix_rt::System::new().block_on(async move {
        let mut c = ControlClient::connect(&dir.socket()).await.ok()?;
        Some(supervisor_turn(&mut c, req).await)
    })
}

async fn supervisor_turn(c: &mut ControlClient, req: TurnRequest) -> Result<(), CliError> {
    let request = ControlRequest::Inbound { turn: req, deliver: false };
    match c.request(request).await? {
        ControlResponse::Reply { text } => {
            println!("{}", text.unwrap_or_else(|| "(taken by the running turn)".into()));
            Ok(())
        }
        ControlResponse::Refused { text } => Err(CliError::refused(text)),
        ControlResponse::Error { message } => Err(CliError::Answered(message)),
        other => Err(CliError::unexpected(other)),
    }
}

/// One turn on an engine embedded in this process, against `dir`.
fn embedded_turn(dir: &DataDir, config: &RavenConfig, clock: SharedClock, req: TurnRequest) -> Result<(), CliError> {
    dir.check_writable()?;
    actix_rt::System::new().block_on(async move {
        let engine = Engine::start(dir, config, clock)?;
        let (_, reply) = engine.scheduler.submit_wait(req);
        match reply.await.map_err(|_| CliError::TurnDropped)? {
            TurnOutcome::Replied(text) => {
                println!("{text}");
                Ok(())
            }
            TurnOutcome::Refused(text) => Err(CliError::refused(text)),
            TurnOutcome::Failed(e) => Err(CliError::TurnFailed(e)),
            TurnOutcome::Interrupted => Err(CliError::TurnInterrupted),
        }
    })
}
