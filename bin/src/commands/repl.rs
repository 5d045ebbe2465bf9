//! `raven repl`: the interactive `cli` channel. It attaches to a running supervisor over the
//! control socket; when none runs, it starts an engine in this process. Proactive messages
//! show with the `[raven ⏰]` marker. Commands: `/status`, `/tick`, `/cron`, `/quit`.

use super::load_config;
use raven_actors::clock::SystemClock;
use raven_actors::cron::store::JobsStore;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::Engine;
use raven_actors::executor::outlets::CliOutlet;
use raven_actors::ipc::ControlClient;
use raven_actors::sentinel::Tick;
use raven_actors::spine::TurnOutcome;
use raven_actors::supervise::render_table;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::{BusyPolicy, Origin, OutboundText, TurnRequest};
use rustyline::error::ReadlineError;
use std::sync::Arc;

enum Backend {
    Attached(ControlClient),
    Embedded(Box<Engine>),
}

const HELP: &str = "commands: /status, /tick, /cron, /quit; anything else goes to the agent";

pub fn run(dir: &DataDir) -> Result<(), String> {
    let config = load_config(dir)?;
    let system = actix_rt::System::new();
    let mut backend = system.block_on(async {
        match ControlClient::connect(&dir.socket()).await {
            Ok(c) => {
                println!("raven repl: attached to the supervisor (pid {})", c.server_pid().unwrap_or(0));
                Ok(Backend::Attached(c))
            }
            Err(_) => {
                let engine = Engine::start(dir, &config, Arc::new(SystemClock))?;
                println!("raven repl: no supervisor running; using an engine in this process");
                Ok::<_, String>(Backend::Embedded(Box::new(engine)))
            }
        }
    })?;
    println!("{HELP}");
    let mut editor = rustyline::DefaultEditor::new().map_err(|e| e.to_string())?;
    let history = dir.root().join("repl_history");
    let _ = editor.load_history(&history);
    let mut n = 0u64;
    loop {
        let line = match editor.readline("you> ") {
            Ok(l) => l,
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => break,
            Err(e) => return Err(e.to_string()),
        };
        let line = line.trim().to_owned();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(&line);
        n += 1;
        let out = system.block_on(handle(&mut backend, dir, &line, n));
        match out {
            Ok(Some(text)) => println!("{text}"),
            Ok(None) => break,
            Err(e) => println!("error: {e}"),
        }
    }
    let _ = editor.save_history(&history);
    Ok(())
}

/// One line; `Ok(None)` ends the REPL.
async fn handle(backend: &mut Backend, dir: &DataDir, line: &str, n: u64) -> Result<Option<String>, String> {
    let proactive = |m: &str| CliOutlet::render(&OutboundText::proactive("", "cli", "local", m));
    match line {
        "/quit" | "/exit" => return Ok(None),
        "/help" => return Ok(Some(HELP.into())),
        "/cron" => {
            let jobs = JobsStore::new(dir.jobs()).load().map_err(|e| e.to_string())?;
            let lines: Vec<String> = jobs.jobs.iter().map(raven_actors::cron::tool::describe).collect();
            return Ok(Some(if lines.is_empty() { "no jobs".into() } else { lines.join("\n") }));
        }
        _ => {}
    }
    match backend {
        Backend::Attached(c) => {
            let req = match line {
                "/status" => ControlRequest::Status,
                "/tick" => ControlRequest::Tick,
                text => ControlRequest::Inbound { turn: turn(text, n), deliver: false },
            };
            Ok(Some(match c.request(req).await.map_err(|e| e.to_string())? {
                ControlResponse::Status { pid, actors, .. } => {
                    format!("supervisor pid {pid}\n{}", render_table(&actors))
                }
                ControlResponse::Ticked { route, cli_messages } => {
                    let mut out: Vec<String> = cli_messages.iter().map(|m| proactive(m)).collect();
                    out.push(format!("(tick: {route})"));
                    out.join("\n")
                }
                ControlResponse::Reply { text } => {
                    format!("raven> {}", text.unwrap_or_else(|| "(taken by the running turn)".into()))
                }
                ControlResponse::Error { message } => format!("error: {message}"),
                other => format!("{other:?}"),
            }))
        }
        Backend::Embedded(engine) => match line {
            // The engine's own `cli` outlet prints what the tick delivers, with the marker.
            "/status" => Ok(Some(render_table(&engine.metrics.snapshot()))),
            "/tick" => {
                let out = engine.runner.call_async(Tick).await.map_err(|e| e.to_string())?;
                Ok(Some(format!("(tick: {})", out.route)))
            }
            text => {
                let (_, reply) = engine.scheduler.submit_wait(turn(text, n));
                Ok(Some(match reply.await.map_err(|_| "the turn was dropped".to_owned())? {
                    TurnOutcome::Replied(t) => format!("raven> {t}"),
                    TurnOutcome::Failed(e) => format!("error: {e}"),
                    TurnOutcome::Interrupted => "(interrupted)".into(),
                }))
            }
        },
    }
}

fn turn(text: &str, n: u64) -> TurnRequest {
    let id = format!("repl-{}-{n}", std::process::id());
    TurnRequest::new(id, Origin::User, "cli:local", "cli", "local", text, BusyPolicy::Append, chrono::Utc::now())
}
