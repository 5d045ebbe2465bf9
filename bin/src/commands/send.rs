//! `raven send <channel:chat_id> <text>`: one message out through the DeliveryHub (the
//! running supervisor's when there is one, else an engine in this process). A message the
//! outlet cannot take now stays in the outbox for a retry; the command says so.

use super::load_config;
use crate::error::CliError;
use raven_actors::clock::SystemClock;
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::targets::Channels;
use raven_actors::engine::{send, Engine};
use raven_actors::ipc::ControlClient;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::sync::Arc;

pub fn run(dir: &DataDir, target: String, text: String) -> Result<(), CliError> {
    if !target.contains(':') {
        return Err(CliError::refused(format!("`{target}` is not channel:chat_id (e.g. webhook:alice, cli:local)")));
    }
    let config = load_config(dir)?;
    Channels::of(&config).check(&target).map_err(CliError::refused)?;
    let response = actix_rt::System::new().block_on(async {
        match ControlClient::connect(&dir.socket()).await {
            Ok(mut c) => c.request(ControlRequest::Send { target, text }).await.map_err(CliError::from),
            Err(_) => {
                dir.check_writable()?;
                let engine = Engine::start(dir, &config, Arc::new(SystemClock))?;
                Ok(send(&engine.hub, &target, &text).await)
            }
        }
    })?;
    match response {
        ControlResponse::Sent { delivered: true, detail } => {
            println!("{}", raven_actors::text::sanitize(&detail));
            Ok(())
        }
        ControlResponse::Sent { delivered: false, detail } => Err(CliError::NotDelivered(detail)),
        ControlResponse::Error { message } => Err(CliError::Answered(message)),
        other => Err(CliError::unexpected(other)),
    }
}
