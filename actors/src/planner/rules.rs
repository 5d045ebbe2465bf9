//! The embedded provider: no network, deterministic decisions from deadlines, routines and
//! the user's activity, emitted as the same `planner_decision` arguments (so they pass the
//! same validation as an LLM's).
//!
//! In order:
//! 1. an open deadline due within the hour or overdue → `nudge`, high priority, once: the
//!    earliest not yet reminded in its hour, listing the others whose hour has begun
//!    ([`super::reminders`]);
//! 2. a routine whose hour is now (user's zone) → `nudge_inject` into the most recently
//!    active session, or a plain `nudge` when no session is active;
//! 3. a deadline due within 24 hours, or within the lead its note asks for (`a week before`,
//!    `提前3天`), once in each → `nudge_defer` until the thread settles when the user
//!    is in an active conversation, else a medium `nudge`;
//! 4. otherwise `skip`.
//!
//! It also answers the heartbeat's forced `heartbeat_decision` call (spec §11), from the
//! HEARTBEAT.md text in the request's last user message: unchecked task items (`- [ ] …`,
//! `* [ ] …`) → `run` with those tasks; none (only `- [x]` items or prose) → `skip`. The
//! contract is in `heartbeat::decision`.

use super::heartbeat;
use super::prompts::TOOL_NAME;
use super::reminders::{due_reminder, due_words, reminder_due};
use crate::context::deadlines::{deadlines_in, lead_words};
use crate::context::words;
use crate::llm::provider::{CompletionRequest, Provider, ProviderError, ProviderReply};
use crate::time::{split_when, DateOrder, LanguageSetting};
use chrono::{Datelike, Duration, Timelike};
use chrono_tz::Tz;
use futures_util::future::LocalBoxFuture;
use raven_proto::PlannerContext;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct RulesProvider {
    tz: Tz,
    order: DateOrder,
    ladder: crate::time::Ladder,
    language: LanguageSetting,
    model: NoModel,
}

/// Why the embedded agent answers: no model is configured, or the configured one cannot be
/// reached. What it cannot do itself, it says so in those words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum NoModel {
    #[default]
    Configured,
    Reachable,
}

impl NoModel {
    /// The answer to what needs a model.
    fn unhandled(self) -> &'static str {
        match self {
            NoModel::Configured => NO_MODEL,
            NoModel::Reachable => MODEL_DOWN,
        }
    }

    fn why(self) -> &'static str {
        match self {
            NoModel::Configured => "No language model is configured",
            NoModel::Reachable => "The language model cannot be reached right now",
        }
    }
}

impl RulesProvider {
    pub fn new(tz: Tz) -> Self {
        RulesProvider {
            tz,
            order: DateOrder::default(),
            ladder: Default::default(),
            language: LanguageSetting::default(),
            model: NoModel::Configured,
        }
    }

    /// As `config` sets it: the zone, how dates read, the anticipation ladder, the language.
    pub fn of_config(config: &crate::config::RavenConfig) -> Self {
        RulesProvider::new(config.general.timezone)
            .with_order(config.general.date_order)
            .with_ladder(config.anticipation.ladder())
            .with_language(config.general.language)
    }

    /// As the stand-in for a configured model that cannot be reached.
    pub fn standing_in(mut self) -> Self {
        self.model = NoModel::Reachable;
        self
    }

    /// How numeric dates in the user's notes read (`general.date_order`).
    pub fn with_order(mut self, order: DateOrder) -> Self {
        self.order = order;
        self
    }

    /// How far ahead each kind of item gets its heads-up (`[anticipation]`).
    pub fn with_ladder(mut self, ladder: crate::time::Ladder) -> Self {
        self.ladder = ladder;
        self
    }

    /// The language its messages are in (`general.language`).
    pub fn with_language(mut self, language: LanguageSetting) -> Self {
        self.language = language;
        self
    }

    pub fn decide(&self, ctx: &PlannerContext) -> Value {
        let now = ctx.now;
        let active = raven_proto::planner_context::latest_private(&ctx.active_sessions);
        let deadlines = deadlines_in(ctx, self.tz, self.order, &self.ladder);
        let lang = self.language.resolve(&ctx.memory_md);

        if let Some(r) = due_reminder(&deadlines, ctx) {
            let d = r.first;
            return json!({
                "action": "nudge", "priority": "high", "proactivity_score": 0.9,
                "reason": format!("deadline `{}` {}", d.title, due_words(d, now, self.tz)),
                "nudge_message": r.message(now, self.tz, lang),
                "target_session": active.map(|s| s.session_key.clone()),
            });
        }
        let (hour, weekday) = (now.with_timezone(&self.tz).hour() as u8, now.with_timezone(&self.tz).weekday());
        // A routine said today already (in the morning brief, or an earlier tick) is not said again.
        let said_today = |topic: &str| {
            let last = ctx.fire_history.get(topic).and_then(|h| h.last_fired);
            last.is_some_and(|t| t.with_timezone(&self.tz).date_naive() == now.with_timezone(&self.tz).date_naive())
        };
        if let Some(r) = ctx.routines.iter().find(|r| r.hour == hour && r.days.on(weekday) && !said_today(&r.topic)) {
            let message = words::routine(&r.topic, lang);
            let reason = format!("routine `{}` at {:02}:00 seen on {} days", r.topic, r.hour, r.days_seen);
            return match active {
                Some(s) => {
                    json!({"action": "nudge_inject", "priority": "low", "proactivity_score": 0.6, "reason": reason, "nudge_message": message, "target_session": s.session_key})
                }
                None => {
                    json!({"action": "nudge", "priority": "low", "proactivity_score": 0.5, "reason": reason, "nudge_message": message})
                }
            };
        }
        // A heads-up is said once in each window (the lead, then the day before).
        let told =
            |d: &&crate::context::deadlines::Deadline| crate::context::deadlines::told(d, now, &ctx.fire_history);
        // One whose hour has begun had its reminder (listed in another's when not its own).
        let ahead = |d: &&crate::context::deadlines::Deadline| {
            d.due > now && d.heads_up_window(now).is_some() && !reminder_due(d, now)
        };
        if let Some(d) = deadlines.iter().filter(ahead).find(|d| !told(d)) {
            let message = words::heads_up(d, now, self.tz, lang);
            let reason = match (d.heads_up_window(now), d.lead_for) {
                (Some(w), Some(need)) if w > Duration::hours(24) => {
                    format!("deadline `{}`: {} gets a heads-up {} before", d.title, need.words(), lead_words(w))
                }
                (Some(w), None) if w > Duration::hours(24) => {
                    format!("deadline `{}`: the note asks to hear of it {} before", d.title, lead_words(w))
                }
                _ => format!("deadline `{}` within 24 hours", d.title),
            };
            return match active {
                Some(s) => {
                    json!({"action": "nudge_defer", "priority": "medium", "proactivity_score": 0.6, "reason": reason, "nudge_message": message, "target_session": s.session_key, "defer_condition": "the current conversation settles"})
                }
                None => {
                    json!({"action": "nudge", "priority": "medium", "proactivity_score": 0.6, "reason": reason, "nudge_message": message})
                }
            };
        }
        json!({"action": "skip", "reason": "nothing due, no routine now", "proactivity_score": 0.0})
    }
}

impl RulesProvider {
    /// The day's analysis without an LLM: the next open deadline, and the most dismissed topic.
    pub fn analyze(&self, ctx: &PlannerContext) -> Value {
        let next = deadlines_in(ctx, self.tz, self.order, &self.ladder).into_iter().find(|d| d.due >= ctx.now);
        let focus = next.map_or_else(
            || "nothing is due".to_owned(),
            |d| format!("{} (due {})", d.title, d.due.with_timezone(&self.tz).format("%a %H:%M")),
        );
        let worst = ctx.fire_history.iter().filter(|(_, h)| h.dismissed > 0).max_by_key(|(_, h)| h.dismissed);
        let watch_out = worst.map_or_else(
            || "no topic is being dismissed".to_owned(),
            |(t, h)| format!("`{t}` was dismissed {}x: hold back on it", h.dismissed),
        );
        json!({"focus": focus, "watch_out": watch_out})
    }
}

impl Provider for RulesProvider {
    fn name(&self) -> &str {
        "rules"
    }

    fn reads_prompt(&self) -> bool {
        false
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async move {
            // The heartbeat's phase one reads the file text, not a planner context.
            if req.tool_choice.as_deref() == Some(heartbeat::TOOL_NAME) {
                let arguments = heartbeat::rules_decision(heartbeat::file_text(req));
                return Ok(ProviderReply::call(heartbeat::TOOL_NAME, arguments));
            }
            // An agent turn (no planner context, no forced tool): the embedded agent.
            if req.context.is_none() && req.tool_choice.is_none() {
                return Ok(agent_reply(req, (self.tz, self.order, self.language), self.model));
            }
            let ctx = req
                .context
                .as_deref()
                .ok_or_else(|| ProviderError::Decode("the rules provider needs the structured context".into()))?;
            if req.tool_choice.as_deref() == Some(crate::context::daily_analysis::TOOL_NAME) {
                let arguments = self.analyze(ctx);
                return Ok(ProviderReply::call(crate::context::daily_analysis::TOOL_NAME, arguments));
            }
            Ok(ProviderReply::call(TOOL_NAME, self.decide(ctx)))
        })
    }
}

/// The embedded agent's answer to what a tool said: done, or (a tool's `error: …`) not done
/// and why.
fn tool_said(result: &str) -> String {
    match result.strip_prefix("error:") {
        Some(why) => format!("That was not done: {}.", why.trim().trim_end_matches('.')),
        None => format!("Done: {}.", result.trim_end_matches('.')),
    }
}

pub const NO_MODEL: &str = "No language model is configured, so I handle reminders and commands only: \
/remind tomorrow at 9 dentist, /remind every weekday at 8:30 standup, /list, /help. \
To talk about anything else, the owner of this Raven sets [llm] base_url in its config.";

pub const MODEL_DOWN: &str = "The language model cannot be reached right now, so I handle reminders and commands \
only: /remind tomorrow at 9 dentist, /list, /help. Anything else, please ask again later.";

/// The embedded agent: what needs no language model. A CRON turn renders its reminder, a
/// HEARTBEAT turn lists its open tasks (it cannot work on them), a `/remind` creates a cron
/// job through the cron tool, anything else gets an honest answer: why there is no model.
fn agent_reply(req: &CompletionRequest, reading: (Tz, DateOrder, LanguageSetting), model: NoModel) -> ProviderReply {
    let (tz, order, language) = reading;
    use crate::llm::provider::Role;
    let system = req.messages.iter().find(|m| m.role == Role::System).map(|m| m.content.as_str()).unwrap_or("");
    let Some(last) = req.messages.last() else { return ProviderReply::Text(model.unhandled().into()) };
    if last.role == Role::Tool {
        return ProviderReply::Text(tool_said(&last.content));
    }
    let text = last.content.trim();
    if system.contains("turn origin: CRON") {
        return ProviderReply::Text(words::job_reminder(text, language.resolve(text)));
    }
    if system.contains("turn origin: HEARTBEAT") {
        let tasks: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("- ")).collect();
        return ProviderReply::Text(format!("Open tasks in HEARTBEAT.md:\n{}", tasks.join("\n")));
    }
    if system.contains("turn origin: SUBAGENT") {
        return ProviderReply::Text(format!("{}, so the task “{text}” was not run.", model.why()));
    }
    let Some(rest) = text.strip_prefix("/remind") else { return ProviderReply::Text(model.unhandled().into()) };
    if !req.tools.iter().any(|t| t.name == "cron") {
        return ProviderReply::Text("Reminders need the cron service, which is not running here.".into());
    }
    match parse_remind(rest.trim(), chrono::Utc::now(), tz, order) {
        Ok(arguments) => ProviderReply::call("cron", arguments),
        Err(why) => ProviderReply::Text(format!(
            "{why}\nWrite it as `/remind <when> <text>`, e.g. `/remind in 1h 30m stretch`."
        )),
    }
}

/// `<when> <text>` → the cron tool's `add` arguments: the time expression as written (the tool
/// reads it again at its own "now") and the text after it. `now` only finds where the
/// expression ends.
// A `String` error: the text the user is answered with in the chat.
pub fn parse_remind(rest: &str, now: chrono::DateTime<chrono::Utc>, tz: Tz, order: DateOrder) -> Result<Value, String> {
    let rest = rest.trim();
    let (_, message) = split_when(rest, now, tz, order).map_err(|e| e.to_string())?;
    let when = rest[..rest.len() - message.len()].trim();
    Ok(json!({"action": "add", "message": message.trim(), "when": when}))
}

#[cfg(test)]
mod agent_tests {
    use super::*;
    use crate::llm::provider::{ChatMessage, ToolSchema};

    fn request(origin_note: &str, user: &str, with_cron: bool) -> CompletionRequest {
        let tools = if with_cron {
            vec![ToolSchema { name: "cron".into(), description: String::new(), parameters: json!({}) }]
        } else {
            Vec::new()
        };
        CompletionRequest {
            messages: vec![ChatMessage::system(origin_note), ChatMessage::user(user)],
            tools,
            tool_choice: None,
            generation: crate::planner::PLANNER_GENERATION,
            context: None,
        }
    }

    fn reply(req: &CompletionRequest) -> ProviderReply {
        agent_reply(req, (chrono_tz::Tz::UTC, DateOrder::MonthFirst, LanguageSetting::Auto), NoModel::Configured)
    }

    #[test]
    fn a_cron_turn_renders_its_reminder() {
        let r = reply(&request("turn origin: CRON — …", "Take your medication", true));
        assert_eq!(r, ProviderReply::Text("Reminder: Take your medication".into()));
        let r = reply(&request("turn origin: CRON — …", "给妈妈打电话", true));
        assert_eq!(
            r,
            ProviderReply::Text("提醒：给妈妈打电话".into()),
            "a reminder written in Chinese is said in Chinese"
        );
    }

    #[test]
    fn remind_in_and_at_become_cron_tool_calls() {
        let r = reply(&request("turn origin: USER", "/remind in 10m stretch your legs", true));
        assert_eq!(
            r,
            ProviderReply::call("cron", json!({"action": "add", "message": "stretch your legs", "when": "in 10m"}))
        );
        let r = reply(&request("turn origin: USER", "/remind at 18:30 call mum", true));
        assert_eq!(r, ProviderReply::call("cron", json!({"action": "add", "message": "call mum", "when": "at 18:30"})));
        let r = reply(&request("turn origin: USER", "/remind in 1h 30m stretch", true));
        let args = json!({"action": "add", "message": "stretch", "when": "in 1h 30m"});
        assert_eq!(r, ProviderReply::call("cron", args));
        let r = reply(&request("turn origin: USER", "/remind in 10m 2 pills", true));
        let args = json!({"action": "add", "message": "2 pills", "when": "in 10m"});
        assert_eq!(r, ProviderReply::call("cron", args));
        for bad in ["/remind in ten call", "/remind at 25:99 x", "/remind blursday x", "/remind in 10m"] {
            assert!(matches!(reply(&request("turn origin: USER", bad, true)), ProviderReply::Text(_)), "{bad}");
        }
    }

    #[test]
    fn a_tool_that_failed_is_not_done() {
        assert_eq!(tool_said("scheduled job ab12cd."), "Done: scheduled job ab12cd.");
        assert_eq!(
            tool_said("error: no outlet delivers to `webhook`."),
            "That was not done: no outlet delivers to `webhook`."
        );
    }

    #[test]
    fn a_heartbeat_turn_lists_its_open_tasks() {
        let content = "Heartbeat check. Work through these tasks:\n- water the plants\n- check the backup log";
        let r = reply(&request("turn origin: HEARTBEAT — periodic task review.", content, true));
        assert_eq!(
            r,
            ProviderReply::Text("Open tasks in HEARTBEAT.md:\n- water the plants\n- check the backup log".into())
        );
    }

    #[test]
    fn a_plain_message_gets_an_honest_answer() {
        let r = reply(&request("turn origin: USER", "how are you?", true));
        assert_eq!(r, ProviderReply::Text(NO_MODEL.into()));
    }

    #[test]
    fn standing_in_for_an_unreachable_model_it_says_so_and_still_schedules() {
        let down = |text: &str| {
            agent_reply(
                &request("turn origin: USER", text, true),
                (Tz::UTC, DateOrder::MonthFirst, LanguageSetting::Auto),
                NoModel::Reachable,
            )
        };
        assert_eq!(down("how are you?"), ProviderReply::Text(MODEL_DOWN.into()));
        let args = json!({"action": "add", "message": "tea", "when": "in 10m"});
        assert_eq!(down("/remind in 10m tea"), ProviderReply::call("cron", args));
    }
}
