//! `raven status`: the running supervisor's actors and their mailbox metrics (`--json`: one
//! JSON object, for a program).

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

/// An RFC 3339 time from the supervisor, as the user reads it.
fn shown(at: Option<&str>, tz: chrono_tz::Tz) -> String {
    match at.map(chrono::DateTime::parse_from_rfc3339) {
        None => "nothing scheduled".into(),
        Some(Ok(t)) => raven_actors::time::local(t.to_utc(), tz),
        Some(Err(_)) => at.unwrap_or_default().to_owned(),
    }
}

/// The timers' next fires, for a person: a line naming the zone, then one line each.
pub fn upcoming_lines(upcoming: &[raven_proto::control::Upcoming], tz: chrono_tz::Tz) -> String {
    let mut out = format!("times in {tz}\n");
    for u in upcoming {
        out.push_str(&format!("next {}: {}\n", u.what, shown(u.at.as_deref(), tz)));
    }
    out
}

pub fn run(dir: &DataDir, json: bool) -> Result<(), String> {
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Status).await.map_err(|e| e.to_string())? {
            ControlResponse::Status { pid, actors, upcoming } if json => {
                let gateway = gateway_pid(dir)
                    .map(|(addr, pid)| serde_json::json!({"pid": pid, "url": format!("http://{addr}")}));
                let status = serde_json::json!({
                    "supervisor": {"pid": pid, "socket": socket},
                    "gateway": gateway,
                    "actors": actors,
                    "upcoming": upcoming,
                });
                println!("{status}");
                Ok(())
            }
            ControlResponse::Status { pid, actors, upcoming } => {
                println!("supervisor pid {pid}, socket {}", socket.display());
                match gateway_pid(dir) {
                    Some((addr, gw)) => println!("gateway pid {gw}, http://{addr}"),
                    None => println!("gateway: not running"),
                }
                print!("{}", render_table(&actors));
                let tz = super::load_config(dir).map(|c| c.general.timezone).unwrap_or(chrono_tz::Tz::UTC);
                print!("{}", upcoming_lines(&upcoming, tz));
                Ok(())
            }
            ControlResponse::Error { message } => Err(message),
            other => Err(format!("unexpected answer: {other:?}")),
        }
    })
}
