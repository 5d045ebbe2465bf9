//! `raven status`: the running supervisor's actors and their mailbox metrics.

use raven_actors::data_dir::DataDir;
use raven_actors::supervise::render_table;
use raven_proto::control::{ControlRequest, ControlResponse};

pub fn run(dir: &DataDir) -> Result<(), String> {
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Status).await.map_err(|e| e.to_string())? {
            ControlResponse::Status { pid, actors } => {
                println!("supervisor pid {pid}, socket {}", socket.display());
                print!("{}", render_table(&actors));
                Ok(())
            }
            ControlResponse::Error { message } => Err(message),
            other => Err(format!("unexpected answer: {other:?}")),
        }
    })
}
