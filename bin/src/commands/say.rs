//! `raven say TEXT`: one user turn on an engine embedded in this process, through the spine
//! and the agent loop; the reply is printed. With no LLM configured the embedded agent
//! handles `/remind <when> <text>` (`in 1h 30m`, `at 6pm`, `tomorrow at 9`, `every weekday at 9`) (jobs in `cron/jobs.json`). When a
//! supervisor (`raven up`) runs on the data dir, the message goes to it over the socket.

use super::load_config;
use super::tick::clock_at;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::Engine;
use raven_actors::ipc::ControlClient;
use raven_actors::spine::TurnOutcome;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::{BusyPolicy, Origin, TurnRequest};

pub fn run(dir: &DataDir, text: String, session: String, at: Option<String>) -> Result<(), String> {
    let config = load_config(dir)?;
    let clock = clock_at(at, &super::load_config(dir)?)?;
    let (channel, chat_id) = raven_proto::split_target(&session);
    actix_rt::System::new().block_on(async move {
        let req = TurnRequest::new(
            format!("say-{}", std::process::id()),
            Origin::User,
            format!("{channel}:{chat_id}"),
            channel,
            chat_id,
            text,
            BusyPolicy::Append,
            clock.now(),
        );
        // A running supervisor takes the message over its socket; else an embedded engine.
        if let Ok(mut c) = ControlClient::connect(&dir.socket()).await {
            return match c
                .request(ControlRequest::Inbound { turn: req, deliver: false })
                .await
                .map_err(|e| e.to_string())?
            {
                ControlResponse::Reply { text } => {
                    println!("{}", text.unwrap_or_else(|| "(taken by the running turn)".into()));
                    Ok(())
                }
                ControlResponse::Error { message } => Err(message),
                other => Err(format!("unexpected answer: {other:?}")),
            };
        }
        let engine = Engine::start(dir, &config, clock.clone())?;
        let (_, reply) = engine.scheduler.submit_wait(req);
        match reply.await.map_err(|_| "the turn was dropped".to_owned())? {
            TurnOutcome::Replied(text) => {
                println!("{text}");
                Ok(())
            }
            TurnOutcome::Failed(e) => Err(format!("the turn failed: {e}")),
            TurnOutcome::Interrupted => Err("the turn was interrupted".into()),
        }
    })
}
