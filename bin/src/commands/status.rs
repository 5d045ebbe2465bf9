//! `raven status`: the running supervisor's actors and their mailbox metrics, the timers and
//! the LLM provider's breaker (`--json`: one JSON object, for a program).

use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_actors::supervise::render_table;
use raven_proto::control::{ControlRequest, ControlResponse, LlmHealth};

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

/// What is wrong with the jobs file, when it cannot be read: a cron line saying "nothing
/// scheduled" would hide it (the jobs read before it broke keep firing).
fn jobs_line(dir: &DataDir) -> String {
    match raven_actors::cron::store::JobsStore::new(dir.jobs()).load() {
        Ok(_) => String::new(),
        Err(e) => format!("cron: {e} (the jobs read before keep firing; fix the file and they are read again)\n"),
    }
}

/// The provider's breaker, for a person: one line, and the last error while it counts.
pub fn llm_lines(llm: Option<&LlmHealth>, tz: chrono_tz::Tz) -> String {
    let Some(h) = llm else { return "llm: embedded rules (no provider to call)\n".into() };
    let head = format!("llm: {} {}", h.provider, h.model);
    let mut out = match h.state.as_str() {
        "open" => format!(
            "{head}: DOWN until {} after {} failed requests in a row; not called until then\n",
            shown(h.open_until.as_deref(), tz),
            h.failures
        ),
        "half_open" => format!("{head}: down period over; the next call probes it\n"),
        _ => format!("{head}: up ({} of {} failures in a row that mark it down)\n", h.failures, h.threshold),
    };
    if let Some(e) = h.last_error.as_deref().filter(|_| h.failures > 0) {
        out.push_str(&format!("  last error: {e}\n"));
    }
    out
}

/// One chat channel's health in words.
pub fn channel_health(h: &raven_actors::channels::health::ChannelHealth) -> String {
    let mut line = format!("{}; {} delivered, {} failed", h.state, h.delivered, h.failed);
    if h.restarts > 0 {
        line.push_str(&format!(", {} restarts", h.restarts));
    }
    if let Some(e) = h.last_error.as_deref().filter(|_| h.state != "ok") {
        line.push_str(&format!("; last error: {e}"));
    }
    line
}

/// A channel enabled in config.toml that the running gateway does not host.
pub(super) const NOT_STARTED: &str =
    "not started: a channel starts with `raven up` (one added while it runs, at its next start)";

/// The chat channels: each enabled one and its health, or how to add one.
fn channel_lines(dir: &DataDir, enabled: &[&str]) -> String {
    if enabled.is_empty() {
        return format!("channels: none; {}\n", super::channels::how_to_add());
    }
    let health = raven_actors::channels::health::HealthBoard::read(dir);
    let mut out = String::from("channels:\n");
    for &name in enabled {
        let h = health.get(name).map(channel_health).unwrap_or_else(|| NOT_STARTED.into());
        out.push_str(&format!("  {name}: {h}\n"));
    }
    out
}

pub fn run(dir: &DataDir, json: bool) -> Result<(), CliError> {
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let mut c = super::connect_supervisor(dir).await?;
        match c.request(ControlRequest::Status).await? {
            ControlResponse::Status { pid, actors, upcoming, llm } if json => {
                let gateway = gateway_pid(dir)
                    .map(|(addr, pid)| serde_json::json!({"pid": pid, "url": format!("http://{addr}")}));
                let status = serde_json::json!({
                    "supervisor": {"pid": pid, "socket": socket},
                    "gateway": gateway,
                    "actors": actors,
                    "upcoming": upcoming,
                    "llm": llm,
                    "channels": raven_actors::channels::health::HealthBoard::read(dir),
                });
                println!("{status}");
                Ok(())
            }
            ControlResponse::Status { pid, actors, upcoming, llm } => {
                println!("supervisor pid {pid}, socket {}", socket.display());
                match gateway_pid(dir) {
                    Some((addr, gw)) => println!("gateway pid {gw}, http://{addr}"),
                    None => println!("gateway: not running"),
                }
                print!("{}", render_table(&actors));
                let config = super::load_config(dir).ok();
                let tz = config.as_ref().map_or(chrono_tz::Tz::UTC, |c| c.general.timezone);
                let enabled = config.as_ref().map(|c| c.channels.enabled()).unwrap_or_default();
                print!("{}", upcoming_lines(&upcoming, tz));
                print!("{}", jobs_line(dir));
                print!("{}", llm_lines(llm.as_ref(), tz));
                print!("{}", channel_lines(dir, &enabled));
                Ok(())
            }
            ControlResponse::Error { message } => Err(CliError::Answered(message)),
            other => Err(CliError::unexpected(other)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(state: &str, failures: u32) -> LlmHealth {
        LlmHealth {
            provider: "openai".into(),
            model: "gpt-4o-mini".into(),
            state: state.into(),
            failures,
            threshold: 5,
            open_until: (state == "open").then(|| "2026-03-02T10:05:00+00:00".into()),
            opened: 1,
            last_error: Some("provider answered HTTP 500: boom".into()),
        }
    }

    #[test]
    fn the_breaker_reads_as_up_or_down_with_its_reason() {
        let tz = chrono_tz::Europe::Berlin;
        let down = llm_lines(Some(&health("open", 5)), tz);
        assert!(down.starts_with("llm: openai gpt-4o-mini: DOWN until "), "{down}");
        assert!(down.contains("5 failed requests in a row") && down.contains("HTTP 500"), "{down}");
        assert!(down.contains("11:05"), "in the user's zone: {down}");
        let up = llm_lines(Some(&health("closed", 0)), tz);
        assert_eq!(up, "llm: openai gpt-4o-mini: up (0 of 5 failures in a row that mark it down)\n");
        assert!(llm_lines(None, tz).contains("embedded rules"));
    }
}
