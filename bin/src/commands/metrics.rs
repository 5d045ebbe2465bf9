//! `raven metrics`: the running supervisor's metrics (actors, event counters, outbox) in the OpenMetrics text format.

use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_proto::control::{ControlRequest, ControlResponse};

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Metrics).await? {
            ControlResponse::Metrics { text } => {
                print!("{text}");
                Ok(())
            }
            other => Err(CliError::unexpected(other)),
        }
    })
}
