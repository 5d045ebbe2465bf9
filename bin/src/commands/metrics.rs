//! `raven metrics`: the running supervisor's actor metrics in Prometheus text format.

use raven_actors::data_dir::DataDir;
use raven_actors::ipc::ControlClient;
use raven_proto::control::{ControlRequest, ControlResponse};

pub fn run(dir: &DataDir) -> Result<(), String> {
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let mut c = ControlClient::connect(&socket)
            .await
            .map_err(|e| format!("no supervisor answers on {} ({e}); start one with `raven up`", socket.display()))?;
        match c.request(ControlRequest::Metrics).await.map_err(|e| e.to_string())? {
            ControlResponse::Metrics { text } => {
                print!("{text}");
                Ok(())
            }
            other => Err(format!("unexpected answer: {other:?}")),
        }
    })
}
