//! `raven policy explain`: which layer would deny a message now, and why, against the
//! ledger in the data dir. Read-only: it never records a fire.

use super::load_config;
use chrono::Utc;
use clap::{Subcommand, ValueEnum};
use raven_actors::data_dir::DataDir;
use raven_actors::feedback::NudgeFeedbackTracker;
use raven_actors::policy::{CheckRequest, NudgePolicy, PolicyState};
use raven_actors::store::owners::{self, Owner};
use raven_actors::time::parse_instant;
use raven_proto::{Action, Priority};

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
    },
}

pub fn run(cmd: PolicyCommand, dir: &DataDir) -> Result<(), String> {
    let PolicyCommand::Explain { content, priority, session, action, topic, at } = cmd;
    let config = load_config(dir)?;
    let g = &config.general;
    let now = match at {
        Some(s) => parse_instant(&s, Utc::now(), g.timezone, g.date_order).map_err(|e| format!("--at: {e}"))?,
        None => Utc::now(),
    };
    let store = owners::open(dir, Owner::Policy).map_err(|e| e.to_string())?;
    let (state, _) = store.read::<PolicyState>("policy").map_err(|e| e.to_string())?;
    // Recovery notices (a corrupt file kept aside) were logged by the store on stderr.
    let fires = state.fires.len();
    // The feedback as the next tick's retune will see it, computed from the log now (a
    // verdict given since the last tick counts), without writing anything.
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), config.general.timezone);
    let mut state = state;
    state.feedback = tracker.summary(now).map_err(|e| e.to_string())?;
    let mut policy = NudgePolicy::new(config.policy, config.general.timezone);
    policy.replace_state(state);
    let req = CheckRequest {
        action: match action {
            ActionArg::Nudge => Action::Nudge,
            ActionArg::NudgeInject => Action::NudgeInject,
            ActionArg::NudgeDefer => Action::NudgeDefer,
            ActionArg::SpawnAgent => Action::SpawnAgent,
            ActionArg::Skip => Action::Skip,
        },
        session_key: session.as_deref(),
        content: &content,
        priority: match priority {
            PriorityArg::Low => Priority::Low,
            PriorityArg::Medium => Priority::Medium,
            PriorityArg::High => Priority::High,
        },
        topic: topic.as_deref(),
        solicited: false,
    };
    let (verdict, trace) = policy.explain(&req, now);
    match verdict.layer {
        None if verdict.bypassed.is_empty() => println!("verdict: allow"),
        None => {
            let names: Vec<_> = verdict.bypassed.iter().map(|l| l.name()).collect();
            println!("verdict: allow (high priority bypassed {})", names.join(", "));
        }
        Some(layer) => println!("verdict: deny at {layer}: {}", verdict.reason),
    }
    println!("at:      {} ({})", raven_actors::time::local(now, config.general.timezone), config.general.timezone);
    println!("topic:   {}", topic.unwrap_or_else(|| raven_actors::policy::topic::topic_of(&content)));
    println!("ledger:  {} ({fires} fires on record)", Owner::Policy.path(dir).display());
    println!("feedback: {} (read now, as the next tick will)", dir.feedback().display());
    println!("layers:");
    for (layer, outcome) in trace {
        let bypass = if layer.high_priority_may_bypass() { "  (high priority may bypass)" } else { "" };
        let line = match outcome {
            Ok(()) => format!("  {:>3} {:<22} pass{bypass}", layer.number(), layer.name()),
            Err(why) => format!("  {:>3} {:<22} DENY  {why}{bypass}", layer.number(), layer.name()),
        };
        println!("{line}");
    }
    Ok(())
}
