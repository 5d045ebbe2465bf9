//! `raven tick`: one Sentinel tick on an engine embedded in this process, against the data
//! dir. A nudge is delivered to this terminal (the `cli` outlet), marked as proactive.

use super::load_config;
use chrono::{DateTime, Utc};
use raven_actors::clock::{ManualClock, SharedClock, SystemClock};
use raven_actors::data_dir::DataDir;
use raven_actors::engine::Engine;
use raven_actors::sentinel::{Router, Tick};
use raven_actors::supervise::{render_table, LocalBoxFuture};
use raven_proto::{ExecutionResult, PlannerDecision};
use std::rc::Rc;
use std::sync::Arc;

/// Prints a proactive message with its marker.
struct Terminal;

impl Router for Terminal {
    fn route<'a>(
        &'a self,
        d: &'a PlannerDecision,
        nudge_id: &'a str,
    ) -> LocalBoxFuture<'a, ExecutionResult> {
        Box::pin(async move {
            let text = d
                .nudge_message
                .as_deref()
                .or(d.spawn_task.as_deref())
                .unwrap_or_default();
            println!("[raven · {} · {nudge_id}] {text}", d.action);
            ExecutionResult::delivered(vec!["cli:local".into()])
        })
    }
}

pub fn run(dir: &DataDir, at: Option<String>, show_metrics: bool) -> Result<(), String> {
    let config = load_config(dir)?;
    let clock: SharedClock = match at {
        Some(s) => {
            let t = DateTime::parse_from_rfc3339(&s).map_err(|e| {
                format!("--at `{s}` is not an RFC 3339 time ({e}); e.g. 2026-03-02T12:00:00Z")
            })?;
            Arc::new(ManualClock::new(t.with_timezone(&Utc)))
        }
        None => Arc::new(SystemClock),
    };
    actix_rt::System::new().block_on(async move {
        let engine = Engine::start(dir, &config, clock, Rc::new(Terminal))?;
        let outcome = engine
            .runner
            .call_async(Tick)
            .await
            .map_err(|e| e.to_string())?;
        let d = &outcome.decision;
        println!("route:    {}", outcome.route);
        println!(
            "decision: {} ({}, score {:.2}): {}",
            d.action, d.priority, d.proactivity_score, d.reason
        );
        if let Some(r) = &outcome.result {
            match &r.error {
                None => println!("result:   delivered to {}", r.targets.join(", ")),
                Some(e) => println!("result:   not delivered: {e}"),
            }
        }
        println!("provider: {}", engine.provider_name);
        for n in &outcome.notes {
            println!("note:     {n}");
        }
        if show_metrics {
            print!("{}", render_table(&engine.metrics.snapshot()));
        }
        Ok(())
    })
}
