//! `raven wake [REASON]`: ask the running supervisor's heartbeat to look at HEARTBEAT.md
//! now instead of at its next interval (coalesced with other wakes, spaced by
//! `heartbeat.wake_min_gap_s`, parked while the user's turns run).

use raven_actors::data_dir::DataDir;
use raven_proto::control::{ControlRequest, ControlResponse};

pub fn run(dir: &DataDir, reason: String) -> Result<(), String> {
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Wake { reason }).await.map_err(|e| e.to_string())? {
            ControlResponse::Ack => {
                println!("heartbeat wake requested");
                Ok(())
            }
            ControlResponse::Error { message } => Err(message),
            other => Err(format!("unexpected answer: {other:?}")),
        }
    })
}
