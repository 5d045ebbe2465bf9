//! The Planner's prompts: the system prompt, the `planner_decision` tool schema and the
//! context renderer (PlannerContext → markdown).

use crate::llm::provider::ToolSchema;
use raven_proto::PlannerContext;
use serde_json::json;
use std::fmt::Write;

pub const TOOL_NAME: &str = "planner_decision";

pub const SYSTEM_PROMPT: &str = "\
You are Raven's proactive planner. Each tick you decide whether it is worth reaching the \
user at all, and how. Answer only by calling the planner_decision tool, with one action:
- skip: nothing worth doing now.
- nudge: send a short standalone message now (needs nudge_message).
- nudge_inject: append a short note to the agent's next reply in target_session (needs nudge_message).
- nudge_defer: wait until target_session's current thread settles, then send (needs nudge_message and defer_condition).
- spawn_agent: run a small agent for a multi-step task (needs spawn_task).
Default to skip unless reaching out is clearly worthwhile right now. Never repeat a topic the \
user dismissed or that fired recently. A low adaptive multiplier means the user wants fewer \
messages: raise your bar accordingly.";

/// Requires only action, reason and score; the conditionally required fields are enforced
/// by `PlannerDecision::validated`.
pub fn tool_schema() -> ToolSchema {
    ToolSchema {
        name: TOOL_NAME.into(),
        description: "Record the proactive decision for this tick.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["skip", "nudge", "nudge_inject", "nudge_defer", "spawn_agent"]},
                "reason": {"type": "string"},
                "priority": {"type": "string", "enum": ["low", "medium", "high"]},
                "proactivity_score": {"type": "number", "minimum": 0, "maximum": 1},
                "target_session": {"type": "string", "description": "channel:chat_id"},
                "nudge_message": {"type": "string"},
                "spawn_task": {"type": "string"},
                "defer_condition": {"type": "string"}
            },
            "required": ["action", "reason", "proactivity_score"]
        }),
    }
}

/// The context as the Planner reads it, whole (what [`super::budget`] bounds).
#[cfg(any(test, feature = "testkit"))]
pub fn render_context(ctx: &PlannerContext) -> String {
    // Sized up front: memory and history can be megabytes, and growing by doubling copies them.
    let big = ctx.memory_md.len() + ctx.history_md_recent.len() + ctx.attention_md.len() + ctx.behaviors_recent.len();
    let mut out = String::with_capacity(big + 4096);
    out.push_str(&frame(ctx));
    section(&mut out, "Fire history (last 7 days)", fire_lines(ctx));
    section(&mut out, "Active sessions", session_lines(ctx));
    section(&mut out, "Routines", routine_lines(ctx));
    section(&mut out, "Calendar", calendar_lines(ctx));
    for (title, body) in [
        ("Attention", ctx.attention_md.as_str()),
        ("Recent behaviour", ctx.behaviors_recent.as_str()),
        ("Memory", &*ctx.memory_md),
        ("Recent history", ctx.history_md_recent.as_str()),
    ] {
        if !body.trim().is_empty() {
            let _ = writeln!(out, "# {title}\n{}\n", body.trim_end());
        }
    }
    out
}

/// A time of the context, in the user's zone.
fn local_of(ctx: &PlannerContext) -> impl Fn(chrono::DateTime<chrono::Utc>) -> String {
    let tz: chrono_tz::Tz = ctx.timezone.parse().unwrap_or(chrono_tz::Tz::UTC);
    move |t| crate::time::local(t, tz)
}

/// Now, the gate and the last decision: what every rendering shows first.
pub fn frame(ctx: &PlannerContext) -> String {
    let mut out = String::new();
    let p = &ctx.nudge_policy_state;
    let tz: chrono_tz::Tz = ctx.timezone.parse().unwrap_or(chrono_tz::Tz::UTC);
    let at = local_of(ctx);
    let now = ctx.now.with_timezone(&tz);
    let _ =
        writeln!(out, "# Now\n{} ({}, local time in {tz}, UTC{})\n", at(ctx.now), now.format("%A"), now.format("%:z"));
    let _ = writeln!(
        out,
        "# Gate\n- quiet hours: {}{}\n- remaining today: {}, this hour: {}, spawns today: {}\n- adaptive multiplier: {:.2} (below 1: the user wants fewer messages), weekend factor: {:.2}",
        p.quiet_hours,
        if p.in_quiet_hours { " (now quiet)" } else { "" },
        p.remaining_today,
        p.remaining_this_hour,
        p.spawn_remaining_today,
        p.adaptive_multiplier,
        p.weekend_factor
    );
    if let Some(until) = p.dismissal_cooldown_until {
        let _ = writeln!(out, "- the user dismissed a nudge; cooldown until {}", at(until));
    }
    out.push('\n');
    if let Some(d) = &ctx.last_decision {
        let _ = writeln!(out, "# Last decision\n{} ({}): {}\n", d.action, d.priority, d.reason);
    }
    out
}

pub fn fire_lines(ctx: &PlannerContext) -> Vec<String> {
    let at = local_of(ctx);
    ctx.fire_history
        .iter()
        .map(|(topic, h)| {
            format!(
                "- {topic}: fired {}x, last {}, accepted {}, dismissed {}",
                h.fired,
                h.last_fired.map(&at).unwrap_or_default(),
                h.accepted,
                h.dismissed
            )
        })
        .collect()
}

pub fn session_lines(ctx: &PlannerContext) -> Vec<String> {
    let at = local_of(ctx);
    ctx.active_sessions
        .iter()
        .map(|s| {
            format!(
                "- {} (last active {}): user said {:?}; assistant said {:?}",
                s.session_key,
                at(s.last_active),
                s.last_user_message.as_deref().unwrap_or(""),
                s.last_assistant_message.as_deref().unwrap_or("")
            )
        })
        .collect()
}

pub fn routine_lines(ctx: &PlannerContext) -> Vec<String> {
    let on = |r: &raven_proto::Routine| match r.days {
        raven_proto::RoutineDays::Every => "",
        raven_proto::RoutineDays::Weekdays => ", weekdays only",
        raven_proto::RoutineDays::Weekends => ", weekends only",
    };
    ctx.routines
        .iter()
        .map(|r| format!("- {} around {:02}:00 ({} days{})", r.topic, r.hour, r.days_seen, on(r)))
        .collect()
}

pub fn calendar_lines(ctx: &PlannerContext) -> Vec<String> {
    let at = local_of(ctx);
    ctx.calendar.iter().map(|c| format!("- {} at {}", c.title, at(c.starts_at))).collect()
}

#[cfg(any(test, feature = "testkit"))]
fn section(out: &mut String, title: &str, lines: Vec<String>) {
    if !lines.is_empty() {
        let _ = writeln!(out, "# {title}\n{}\n", lines.join("\n"));
    }
}

pub const ANALYSIS_PROMPT: &str = "\
You are Raven's daily analyst. Read the user's memory, history and plan below, and call the \
daily_analysis tool once: focus is what deserves the user's attention today, watch_out is what \
could go wrong today if nobody looks. One or two sentences each.";

pub fn analysis_schema() -> ToolSchema {
    ToolSchema {
        name: crate::context::daily_analysis::TOOL_NAME.into(),
        description: "Record today's analysis.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"focus": {"type": "string"}, "watch_out": {"type": "string"}},
            "required": ["focus", "watch_out"]
        }),
    }
}
