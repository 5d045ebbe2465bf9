//! `raven repl`: the interactive `cli` channel. It attaches to a running supervisor over the
//! control socket; when none runs, it starts an engine in this process whose cron timer takes
//! only `cli` jobs (so it never steals one meant for a real channel). Commands: `/status`,
//! `/tick`, `/cron`, `/quit`; `/ok`, `/stop` and `/snooze` go to the engine, which answers them
//! without a model.
//!
//! Line editing runs on its own thread; the engine (or the socket) runs on this one, so
//! proactive messages, cron reminders and ask_user questions show between prompts, with the
//! `[raven ⏰]` marker, while the prompt waits. Each line is served on its own task: the
//! answer to a question can be typed while the turn that asked it waits. Input from a pipe is
//! served line by line instead, every answer printed before the session ends, and what reached
//! it meanwhile (a reminder that waited for the terminal) printed too before it leaves.

use super::load_config;
use crate::error::CliError;
use raven_actors::agent::{dispatch_inbound, Inbound};
use raven_actors::clock::SystemClock;
use raven_actors::cron::store::JobsStore;
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::hub::RegisterOutlet;
use raven_actors::delivery::outlets::CliOutlet;
use raven_actors::engine::{Engine, EngineControl, Overrides};
use raven_actors::ipc::{ControlClient, DuplexClient, Pushed, EVENT_QUEUE};
use raven_actors::sentinel::Tick;
use raven_actors::spine::{Routed, TurnOutcome};
use raven_actors::supervise::render_table;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::{BusyPolicy, Origin, TurnRequest};
use rustyline::error::ReadlineError;
use rustyline::ExternalPrinter;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// The supervisor connection; replaced when a restarted supervisor is found again.
type Slot = Rc<RefCell<Rc<DuplexClient>>>;

enum Backend {
    Attached(Slot),
    Embedded(Box<Engine>),
}

/// Subscribes a fresh connection to the supervisor's events.
async fn attach(c: ControlClient) -> Result<(DuplexClient, UnboundedReceiver<Pushed>, u32), CliError> {
    let pid = c.server_pid().unwrap_or(0);
    let (client, pushed) = c.into_duplex();
    match client.request(ControlRequest::Subscribe).await? {
        ControlResponse::Subscribed => Ok((client, pushed, pid)),
        other => Err(CliError::NoEvents(Box::new(other))),
    }
}

/// Forwards the supervisor's events to the screen; when the supervisor goes away, looks for
/// a new one every 200 ms and reattaches (the prompt stays usable meanwhile).
async fn follow(slot: Slot, mut pushed: UnboundedReceiver<Pushed>, socket: PathBuf, tx: UnboundedSender<String>) {
    loop {
        while let Some(p) = pushed.recv().await {
            if let Pushed::Event(e) = p {
                if tx.send(e).is_err() {
                    return;
                }
            }
        }
        let _ = tx.send("(the supervisor went away; reattaching…)".into());
        loop {
            actix_rt::time::sleep(std::time::Duration::from_millis(200)).await;
            let Ok(c) = ControlClient::connect(&socket).await else { continue };
            if let Ok((client, p, pid)) = attach(c).await {
                *slot.borrow_mut() = Rc::new(client);
                pushed = p;
                let _ = tx.send(format!("(reattached to the supervisor, pid {pid})"));
                break;
            }
        }
    }
}

const HELP: &str = "commands: /status, /tick, /cron, /quit, and /help for the chat's own (/remind, /list, …); \
on the last proactive message: /ok [topic], /stop [topic], /later, /snooze <duration>|off; anything else goes \
to the agent";

/// Prints between prompts without tearing the line being edited (plain stdout when the
/// terminal offers no external printer).
#[derive(Clone)]
struct Screen(Rc<RefCell<Option<Box<dyn ExternalPrinter>>>>);

impl Screen {
    /// Prints `text` with its escape sequences taken out (a reply or a reminder must not
    /// drive the terminal).
    fn print(&self, text: String) {
        let text = raven_actors::text::sanitize(&text);
        match self.0.borrow_mut().as_mut() {
            Some(p) => {
                if p.print(format!("{text}\n")).is_err() {
                    println!("{text}");
                }
            }
            None => println!("{text}"),
        }
    }
}

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    let config = load_config(dir)?;
    let system = actix_rt::System::new();
    let (backend, events) = system.block_on(async {
        match ControlClient::connect(&dir.socket()).await {
            Ok(c) => {
                let (client, pushed, pid) = attach(c).await?;
                let slot: Slot = Rc::new(RefCell::new(Rc::new(client)));
                let (tx, events) = tokio::sync::mpsc::unbounded_channel();
                actix_rt::spawn(follow(slot.clone(), pushed, dir.socket(), tx));
                println!("raven repl: attached to the supervisor (pid {pid})");
                Ok::<_, CliError>((Backend::Attached(slot), events))
            }
            Err(_) => {
                // An engine of its own writes the data dir: a read-only one is said at once.
                dir.check_writable()?;
                let engine = embedded(dir, &config)?;
                // What the engine's `cli` outlet delivers comes back here, to be printed.
                let (tx, events) = tokio::sync::mpsc::unbounded_channel();
                let mut rx = engine.events.subscribe(EVENT_QUEUE);
                actix_rt::spawn(async move {
                    while let Some(e) = rx.recv().await {
                        if tx.send(e).is_err() {
                            return;
                        }
                    }
                });
                println!("raven repl: no supervisor running; using an engine in this process");
                Ok((Backend::Embedded(Box::new(engine)), events))
            }
        }
    })?;
    println!("{HELP}");
    let mut editor = rustyline::DefaultEditor::new()?;
    let screen = Screen(Rc::new(RefCell::new(
        editor.create_external_printer().ok().map(|p| Box::new(p) as Box<dyn ExternalPrinter>),
    )));
    let lines = read_lines(editor, dir.root().join("repl_history"));
    system.block_on(session(Rc::new(backend), dir.clone(), screen, lines, events));
    Ok(())
}

/// The embedded engine: every loop running, cron limited to `cli` jobs, and `cli` messages
/// published to this REPL only (not written to stdout under the prompt).
fn embedded(dir: &DataDir, config: &raven_actors::config::RavenConfig) -> Result<Engine, CliError> {
    let o = Overrides { cron_channels: Some(vec!["cli".into()]), ..Default::default() };
    let mut engine = Engine::start_with(dir, config, Arc::new(SystemClock), o)?;
    engine.follow_config(dir, &dir.config());
    engine.hub.do_send(RegisterOutlet(Arc::new(CliOutlet::events_only(engine.events.clone()))));
    // Dropping the handles detaches the loops: they run as long as the process.
    drop(engine.spawn_loops(config));
    Ok(engine)
}

/// The line-editing thread: each line goes to the session, `/quit` at EOF (Ctrl-D). Ctrl-C
/// drops the line being typed, as in a shell, and never leaves. The history is saved after
/// every line, so nothing typed is lost however the process ends.
fn read_lines(
    mut editor: rustyline::DefaultEditor,
    history: std::path::PathBuf,
) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let _ = editor.load_history(&history);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || loop {
        let line = match editor.readline("you> ") {
            Ok(l) => l.trim().to_owned(),
            Err(ReadlineError::Interrupted) => {
                println!("(line dropped; Ctrl-D or /quit leaves)");
                continue;
            }
            Err(ReadlineError::Eof) => {
                let _ = tx.send("/quit".to_owned());
                break;
            }
            Err(e) => {
                let _ = tx.send(format!("/error {e}"));
                break;
            }
        };
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(&line);
        if let Err(e) = editor.save_history(&history) {
            tracing::warn!("the repl history was not saved to {}: {e}", history.display());
        }
        let quit = line == "/quit" || line == "/exit";
        if tx.send(line).is_err() || quit {
            break;
        }
    });
    rx
}

async fn session(
    backend: Rc<Backend>,
    dir: DataDir,
    screen: Screen,
    mut lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut events: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (s, last_event) = (screen.clone(), Rc::new(std::cell::Cell::new(std::time::Instant::now())));
    let printed = last_event.clone();
    actix_rt::spawn(async move {
        while let Some(e) = events.recv().await {
            s.print(e);
            printed.set(std::time::Instant::now());
        }
        s.print("(the supervisor closed the connection)".into());
    });
    // Piped input (`echo hi | raven repl`) is served line by line, each answer before the
    // next line, and all of it before the end of input ends the session.
    let piped = !std::io::IsTerminal::is_terminal(&std::io::stdin());
    let mut n = 0u64;
    while let Some(line) = lines.recv().await {
        match line.as_str() {
            "/quit" | "/exit" => break,
            l if l.starts_with("/error ") => {
                screen.print(l.trim_start_matches("/error ").to_owned());
                return;
            }
            _ => {}
        }
        n += 1;
        let (backend, dir, screen) = (backend.clone(), dir.clone(), screen.clone());
        let served = async move {
            match handle(&backend, &dir, &line, n).await {
                Ok(Some(text)) => screen.print(text),
                Ok(None) => {}
                Err(e) => screen.print(format!("error: {e}")),
            }
        };
        if piped {
            served.await;
        } else {
            actix_rt::spawn(served);
        }
    }
    if piped {
        settle(&last_event).await;
    }
}

/// Waits until no event has come for [`SETTLED`] (at most [`SETTLE_AT_MOST`]): what reached
/// this REPL counts as delivered, so a piped session prints it before it ends (attaching
/// hands it what waited for the terminal, which arrives just after).
async fn settle(last_event: &std::cell::Cell<std::time::Instant>) {
    let started = std::time::Instant::now();
    while started.elapsed() < SETTLE_AT_MOST {
        let quiet = last_event.get().elapsed().min(started.elapsed());
        if quiet >= SETTLED {
            return;
        }
        actix_rt::time::sleep(SETTLED - quiet).await;
    }
}

const SETTLED: std::time::Duration = std::time::Duration::from_millis(300);
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(3);

/// One line; `Ok(None)` when there is nothing to print (the reply comes as an event).
async fn handle(backend: &Backend, dir: &DataDir, line: &str, n: u64) -> Result<Option<String>, CliError> {
    let tz = load_config(dir)?.general.timezone;
    match line {
        "/help" => return Ok(Some(HELP.into())),
        "/cron" => {
            let jobs = JobsStore::new(dir.jobs()).load()?;
            let lines: Vec<String> = jobs.jobs.iter().map(|j| raven_actors::cron::tool::describe(j, tz)).collect();
            let header = format!("times in {tz}");
            return Ok(Some(if lines.is_empty() {
                "no jobs".into()
            } else {
                format!("{header}\n{}", lines.join("\n"))
            }));
        }
        _ => {}
    }
    match backend {
        Backend::Attached(slot) => {
            let c = slot.borrow().clone();
            let req = match line {
                "/status" => ControlRequest::Status,
                "/tick" => ControlRequest::Tick,
                text => ControlRequest::Inbound { turn: turn(text, n), deliver: false },
            };
            Ok(Some(match c.request(req).await? {
                ControlResponse::Status { pid, actors, upcoming, .. } => status(tz, Some(pid), &actors, &upcoming),
                // The tick's `cli` messages arrive as events.
                ControlResponse::Ticked { route, detail, .. } => {
                    let why = detail.iter().find_map(|l| {
                        l.strip_prefix("result:   not delivered: ").or_else(|| l.strip_prefix("why:      "))
                    });
                    why.map_or_else(|| format!("(tick: {route})"), |why| format!("(tick: {route}: {why})"))
                }
                ControlResponse::Reply { text: Some(text) } | ControlResponse::Refused { text } => {
                    format!("raven> {text}")
                }
                ControlResponse::Reply { text: None } => return Ok(None),
                ControlResponse::Error { message } => format!("error: {message}"),
                other => format!("{other:?}"),
            }))
        }
        Backend::Embedded(engine) => match line {
            "/status" => {
                let upcoming = EngineControl::of(engine).upcoming().await;
                Ok(Some(status(tz, None, &engine.metrics.snapshot(), &upcoming)))
            }
            "/tick" => {
                let out = engine.runner.call_async(Tick).await?;
                Ok(Some(match out.fast_path_words() {
                    Some(why) => format!("(tick: {}: {why})", out.route),
                    None => format!("(tick: {})", out.route),
                }))
            }
            text => match dispatch_inbound(&engine.scheduler, &engine.questions, turn(text, n)) {
                // An answer to a question, or input merged into the running turn.
                (Inbound::Answered, _) | (Inbound::Routed(Routed::Injected), _) | (_, None) => Ok(None),
                (_, Some(reply)) => Ok(Some(match reply.await.map_err(|_| CliError::TurnDropped)? {
                    TurnOutcome::Replied(t) | TurnOutcome::Refused(t) => format!("raven> {t}"),
                    TurnOutcome::Failed(e) => format!("error: {e}"),
                    TurnOutcome::Interrupted => "(interrupted)".into(),
                })),
            },
        },
    }
}

fn status(
    tz: chrono_tz::Tz,
    pid: Option<u32>,
    actors: &[raven_proto::control::MeterSnapshot],
    upcoming: &[raven_proto::control::Upcoming],
) -> String {
    let mut out = pid.map(|p| format!("supervisor pid {p}\n")).unwrap_or_default();
    out.push_str(&render_table(actors));
    out.push_str(&super::status::upcoming_lines(upcoming, tz));
    out.trim_end().to_owned()
}

fn turn(text: &str, n: u64) -> TurnRequest {
    let id = format!("repl-{}-{n}", std::process::id());
    TurnRequest::new(id, Origin::User, "cli:local", "cli", "local", text, BusyPolicy::Append, chrono::Utc::now())
}
