//! `raven tick`: one Sentinel tick now. With a supervisor running it is that supervisor's
//! tick, over the socket; otherwise an engine embedded in this process ticks against the data
//! dir, through the configured executors and outlets (the `cli` outlet prints to this
//! terminal with a proactive marker). `--at` is a dry run: an embedded engine ticks at that
//! time on a private copy of the data dir, and nothing is saved.

use super::load_config;
use crate::error::CliError;
use chrono::Utc;
use raven_actors::clock::{ManualClock, SharedClock, SystemClock};
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::hub::RetryOutbox;
use raven_actors::engine::Engine;
use raven_actors::ipc::ControlClient;
use raven_actors::sentinel::{PollDeferred, Tick};
use raven_actors::supervise::render_table;
use raven_actors::time::parse_instant;
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::TickOutcome;
use std::sync::Arc;

/// The system clock, or a manual one stopped at `--at`: any one-shot form of the shared time
/// parser, read in the user's zone (`2026-03-02 12:00`, `tomorrow at 9`, `22:30`, RFC 3339).
pub fn clock_at(at: Option<String>, config: &RavenConfig) -> Result<SharedClock, CliError> {
    match at {
        Some(s) => {
            let g = &config.general;
            let t = parse_instant(&s, Utc::now(), g.timezone, g.date_order).map_err(CliError::bad_time("--at"))?;
            Ok(Arc::new(ManualClock::new(t)))
        }
        None => Ok(Arc::new(SystemClock)),
    }
}

/// The running supervisor's tick, over its socket.
async fn supervisor_tick(c: &mut ControlClient, show_metrics: bool) -> Result<(), CliError> {
    match c.request(ControlRequest::Tick).await? {
        ControlResponse::Ticked { route, cli_messages, detail } => {
            println!("route:    {route} (the supervisor's tick)");
            for line in detail {
                println!("{}", raven_actors::text::sanitize(&line));
            }
            for m in cli_messages {
                println!("cli:      {}", raven_actors::text::sanitize(&m));
            }
        }
        ControlResponse::Error { message } => return Err(CliError::Answered(message)),
        other => return Err(CliError::unexpected(other)),
    }
    if show_metrics {
        if let ControlResponse::Status { actors, .. } = c.request(ControlRequest::Status).await? {
            print!("{}", render_table(&actors));
        }
    }
    Ok(())
}

pub fn run(dir: &DataDir, at: Option<String>, show_metrics: bool) -> Result<(), CliError> {
    let config = load_config(dir)?;
    if at.is_some() {
        let clock = clock_at(at, &config)?;
        let dry = super::dry_run(dir)?;
        return embedded_tick(dry.dir(), config, clock, show_metrics);
    }
    if let Some(result) = ask_supervisor(dir, show_metrics) {
        return result;
    }
    embedded_tick(dir, config, Arc::new(SystemClock), show_metrics)
}

/// The running supervisor's tick; `None` when none answers on the socket.
fn ask_supervisor(dir: &DataDir, show_metrics: bool) -> Option<Result<(), CliError>> {
    actix_rt::System::new().block_on(async {
        match ControlClient::connect(&dir.socket()).await {
            Ok(mut c) => Some(supervisor_tick(&mut c, show_metrics).await),
            Err(_) => None,
        }
    })
}

/// One tick on an engine embedded in this process, against `dir`.
fn embedded_tick(dir: &DataDir, config: RavenConfig, clock: SharedClock, show_metrics: bool) -> Result<(), CliError> {
    actix_rt::System::new().block_on(async move {
        let engine = Engine::start(dir, &config, clock)?;
        catch_up(&engine).await?;
        let outcome = engine.runner.call_async(Tick).await?;
        print_outcome(&outcome, &engine.provider_name);
        settle_spawns(&engine, &config).await;
        if show_metrics {
            print!("{}", render_table(&engine.metrics.snapshot()));
        }
        Ok(())
    })
}

/// Outbox retries and settled defers first, as the long-running loops would.
async fn catch_up(engine: &Engine) -> Result<(), CliError> {
    if let Ok(Ok(r)) = engine.hub.call_async(RetryOutbox).await {
        if r.delivered + r.still_queued > 0 {
            println!("outbox:   {} delivered, {} still queued", r.delivered, r.still_queued);
        }
    }
    for d in engine.runner.call_async(PollDeferred).await? {
        let how = d.result.and_then(|r| r.error).unwrap_or_else(|| "delivered".into());
        println!("{}", raven_actors::text::sanitize(&format!("deferred: {} ({how})", d.route)));
    }
    Ok(())
}

/// A micro-agent this tick started runs to its end before the process exits (bounded by
/// `agent.subagent_timeout_s`): its result is delivered and charged, or nothing is.
async fn settle_spawns(engine: &Engine, config: &RavenConfig) {
    if engine.spawns.running() == 0 {
        return;
    }
    let within = std::time::Duration::from_secs(config.agent.subagent_timeout_s);
    println!("spawn:    waiting for the micro-agent (at most {} s)", within.as_secs());
    match engine.spawns.settle(within).await {
        Some(ended) => ended.iter().for_each(|e| println!("spawn:    {}", raven_actors::text::sanitize(e))),
        None => println!("spawn:    still running after {} s; stopped, nothing sent", within.as_secs()),
    }
}

/// The tick's outcome, its lines taken out of escape sequences (a reason quotes the user's
/// own text).
fn print_outcome(outcome: &TickOutcome, provider: &str) {
    use raven_actors::text::sanitize;
    println!("route:    {}", outcome.route);
    outcome.describe().iter().for_each(|l| println!("{}", sanitize(l)));
    println!("provider: {provider}");
    for n in &outcome.notes {
        println!("note:     {}", sanitize(n));
    }
}
