//! `raven status`: the running supervisor's actors and their mailbox metrics.

use raven_actors::data_dir::DataDir;
use raven_actors::supervise::render_table;
use raven_proto::control::{ControlRequest, ControlResponse};

/// The gateway's address and pid from `gateway.addr`, when that process is alive.
fn gateway_pid(dir: &DataDir) -> Option<(String, u32)> {
    let text = std::fs::read_to_string(dir.gateway_addr()).ok()?;
    let (addr, pid) = text.trim().split_once(' ')?;
    let pid: u32 = pid.parse().ok()?;
    std::path::Path::new(&format!("/proc/{pid}")).exists().then(|| (addr.to_owned(), pid))
}

pub fn run(dir: &DataDir) -> Result<(), String> {
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Status).await.map_err(|e| e.to_string())? {
            ControlResponse::Status { pid, actors, upcoming } => {
                println!("supervisor pid {pid}, socket {}", socket.display());
                match gateway_pid(dir) {
                    Some((addr, gw)) => println!("gateway pid {gw}, http://{addr}"),
                    None => println!("gateway: not running"),
                }
                print!("{}", render_table(&actors));
                for u in upcoming {
                    println!("next {}: {}", u.what, u.at.as_deref().unwrap_or("nothing scheduled"));
                }
                Ok(())
            }
            ControlResponse::Error { message } => Err(message),
            other => Err(format!("unexpected answer: {other:?}")),
        }
    })
}
