//! `raven wake [REASON]`: ask the running supervisor's heartbeat to look at HEARTBEAT.md
//! now instead of at its next interval (coalesced with other wakes, spaced by
//! `heartbeat.wake_min_gap_s`, parked while the user's turns run), then print what that
//! heartbeat tick did, as its journal line says (`--wait 0`: do not wait).

use super::outcome::Waiter;
use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::time::Duration;

pub fn run(dir: &DataDir, reason: String, wait_s: u64) -> Result<(), CliError> {
    let tz = super::load_config(dir)?.general.timezone;
    let waiter = Waiter::before_request(dir, "heartbeat");
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Wake { reason }).await? {
            ControlResponse::Ack => Ok(()),
            ControlResponse::Error { message } => Err(CliError::Answered(message)),
            other => Err(CliError::unexpected(other)),
        }
    })?;
    println!("heartbeat wake requested");
    if wait_s == 0 {
        return Ok(());
    }
    waiter.print_outcome(Duration::from_secs(wait_s), tz, "heartbeat")
}
