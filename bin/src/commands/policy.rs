//! `raven policy explain`: which layer would deny a message now, and why. It evaluates the
//! gate exactly as the next Sentinel tick would check with it: the configured policy with the
//! user's preferences (MEMORY.md, preferences.toml) applied, the ledger in the data dir, and
//! the retune with the feedback log as it is now. Read-only: it never records a fire.

use super::load_config;
use crate::error::CliError;
use chrono::Utc;
use clap::{Subcommand, ValueEnum};
use raven_actors::context::preferences::toml_path;
use raven_actors::data_dir::DataDir;
use raven_actors::policy::{CheckRequest, Trace};
use raven_actors::sentinel::next_gate;
use raven_actors::store::owners::Owner;
use raven_actors::time::parse_instant;
use raven_proto::{Action, Priority, Verdict};

#[derive(Clone, Copy, ValueEnum)]
pub enum PriorityArg {
    Low,
    Medium,
    High,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ActionArg {
    Nudge,
    NudgeInject,
    NudgeDefer,
    SpawnAgent,
    Skip,
}

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Run the gate on a message without sending it.
    Explain {
        /// The message (or the task, for spawn-agent).
        #[arg(long)]
        content: String,
        #[arg(long, value_enum, default_value = "low")]
        priority: PriorityArg,
        /// The target session, `channel:chat_id`.
        #[arg(long)]
        session: Option<String>,
        #[arg(long, value_enum, default_value = "nudge")]
        action: ActionArg,
        /// An explicit topic tag (default: derived from the content).
        #[arg(long)]
        topic: Option<String>,
        /// Evaluate at this time instead of now: `22:30`, `tomorrow at 9`, `2026-03-02 12:00`
        /// (in the user's zone) or RFC 3339.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// One JSON object: the verdict and every layer's own answer.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: PolicyCommand, dir: &DataDir) -> Result<(), CliError> {
    let PolicyCommand::Explain { content, priority, session, action, topic, at, json } = cmd;
    let config = load_config(dir)?;
    let g = &config.general;
    let now = match at {
        Some(s) => parse_instant(&s, Utc::now(), g.timezone, g.date_order).map_err(CliError::bad_time("--at"))?,
        None => Utc::now(),
    };
    // Read only: a corrupt ledger is left where it is and said in the notes.
    let gate = next_gate(dir, &config, now)?;
    let req = CheckRequest {
        action: action.into(),
        session_key: session.as_deref(),
        content: &content,
        priority: priority.into(),
        topic: topic.as_deref(),
        solicited: false,
    };
    let (verdict, trace) = gate.policy.explain(&req, now);
    if json {
        println!("{}", as_json(&verdict, &trace, now, &gate.notes));
        return Ok(());
    }
    print_verdict(&verdict);
    println!("at:      {} ({})", raven_actors::time::local(now, g.timezone), g.timezone);
    println!("topic:   {}", topic.unwrap_or_else(|| raven_actors::policy::topic::topic_of(&content)));
    println!("ledger:  {} ({} fires on record)", ledger_at(dir).display(), gate.fires);
    println!("feedback: {} (read now, as the next tick will)", dir.feedback().display());
    println!("preferences: {}, {} (applied as the next tick will)", dir.memory().display(), toml_path(dir).display());
    for note in &gate.notes {
        println!("  note: {note}");
    }
    print_trace(trace);
    Ok(())
}

fn print_verdict(verdict: &Verdict) {
    match verdict.layer {
        None if verdict.bypassed.is_empty() => println!("verdict: allow"),
        None => {
            let names: Vec<_> = verdict.bypassed.iter().map(|l| l.name()).collect();
            println!("verdict: allow (high priority bypassed {})", names.join(", "));
        }
        Some(layer) => println!("verdict: deny at {layer}: {}", verdict.reason),
    }
}

/// The verdict and the trace for a program.
fn as_json(verdict: &Verdict, trace: &Trace, now: chrono::DateTime<Utc>, notes: &[String]) -> serde_json::Value {
    let layers: Vec<serde_json::Value> = trace
        .iter()
        .map(|(layer, outcome)| {
            serde_json::json!({
                "number": layer.number(), "name": layer.name(), "pass": outcome.is_ok(),
                "reason": outcome.as_ref().err(), "high_priority_may_bypass": layer.high_priority_may_bypass(),
            })
        })
        .collect();
    serde_json::json!({
        "at": now.to_rfc3339(),
        "allow": verdict.allow,
        "layer": verdict.layer.map(|l| serde_json::json!({"number": l.number(), "name": l.name()})),
        "reason": verdict.reason,
        "bypassed": verdict.bypassed.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "notes": notes,
        "layers": layers,
    })
}

fn print_trace(trace: Trace) {
    println!("layers:");
    for (layer, outcome) in trace {
        let bypass = if layer.high_priority_may_bypass() { "  (high priority may bypass)" } else { "" };
        let line = match outcome {
            Ok(()) => format!("  {:>3} {:<22} pass{bypass}", layer.number(), layer.name()),
            Err(why) => format!("  {:>3} {:<22} DENY  {why}{bypass}", layer.number(), layer.name()),
        };
        println!("{line}");
    }
}

impl From<ActionArg> for Action {
    fn from(a: ActionArg) -> Action {
        match a {
            ActionArg::Nudge => Action::Nudge,
            ActionArg::NudgeInject => Action::NudgeInject,
            ActionArg::NudgeDefer => Action::NudgeDefer,
            ActionArg::SpawnAgent => Action::SpawnAgent,
            ActionArg::Skip => Action::Skip,
        }
    }
}

impl From<PriorityArg> for Priority {
    fn from(p: PriorityArg) -> Priority {
        match p {
            PriorityArg::Low => Priority::Low,
            PriorityArg::Medium => Priority::Medium,
            PriorityArg::High => Priority::High,
        }
    }
}

/// Where the ledger is read from: an earlier version's file while no writer has imported it,
/// else the state database.
fn ledger_at(dir: &DataDir) -> std::path::PathBuf {
    match raven_actors::store::owners::unimported(dir, Owner::Policy) {
        Some(file) => file.path().to_owned(),
        None => dir.state_db(),
    }
}
