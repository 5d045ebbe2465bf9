//! TaskDiscoverer (spec §12): once a day, from the runner's tick (a time guard; it sleeps
//! with the Sentinel), it reads memory and HEARTBEAT.md, proposes a few tasks as a menu,
//! passes the NudgePolicy and sends the numbered menu through `dispatch_options`. The rules
//! provider derives the options itself: each open deadline becomes "remind me an hour
//! before" (a cron tool call), each unchecked HEARTBEAT.md item "work on it" (a spawn, behind
//! a confirm step). An LLM provider proposes them through the `propose_tasks` tool call.

use super::error::{DiscoveryError, OptionError};
use super::pending::{Choice, ChoiceAction, PendingDecision, PendingDecisionStore, PendingState};
use super::restraint::{allowed_on, Held, Offered};
use crate::config::DiscoveryConfig;
use crate::context::deadlines::parse_deadlines;
use crate::executor::dispatcher::{render_menu, MenuOption, NudgeDispatcher};
use crate::feedback::{Dispatch, Source};
use crate::journal::{DiscoveryRun as DiscoveryLine, Event};
use crate::llm::provider::{Caller, ChatMessage, CompletionRequest, Generation, SharedProvider, ToolSchema};
use crate::policy::{dispatch_through, Gated, Nudge, NudgePolicyService};
use crate::sentinel::DiscoveryHook;
use crate::store::JsonStateStore;
use crate::supervise::{Handle, LocalBoxFuture};
use crate::time::{Language, LanguageSetting};
use chrono::{DateTime, Duration, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, Priority};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::rc::Rc;

pub const PROPOSE_TOOL: &str = "propose_tasks";

/// The menu's question, in the user's language.
fn question(lang: Language) -> &'static str {
    match lang {
        Language::English => "Anything I can take off your plate today?",
        Language::Chinese => "今天有什么我可以帮你分担的吗？",
    }
}
/// Bytes of the end of history.md an LLM sees.
const HISTORY_TAIL: u64 = 4096;

pub struct TaskDiscoverer {
    pub menus: Rc<PendingDecisionStore>,
    /// Where the day of the last menu is kept, so a restart does not send a second one.
    pub guard: JsonStateStore,
    pub provider: SharedProvider,
    pub policy: Handle<NudgePolicyService>,
    pub dispatcher: NudgeDispatcher,
    pub memory_md: PathBuf,
    /// Its tail shows what the user has been doing (for an LLM's proposals).
    pub history_md: PathBuf,
    pub heartbeat_md: PathBuf,
    pub tz: Tz,
    pub order: crate::time::DateOrder,
    /// The language of the menu the rules make (`general.language`).
    pub language: LanguageSetting,
    pub cfg: DiscoveryConfig,
    /// `channel:chat_id` the menu goes to.
    pub target: String,
    /// Today's proposal the gate denied, offered again on a later tick without a new call.
    pub held: Held,
    /// A failed proposal (a model outage) waits before the next try.
    pub backoff: crate::supervise::backoff::LoopBackoff,
}

/// What a discovery run did (for the log and the tests).
#[derive(Debug, Clone, PartialEq)]
pub enum Discovered {
    NotDue,
    NothingToPropose,
    /// Every option was offered within the last week: no menu today.
    NothingNew,
    Denied(String),
    Failed(String),
    Sent {
        menu_id: String,
        options: usize,
    },
}

/// Who started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// The day's run, at `discovery.hour`.
    Daily,
    /// The user (`raven discover`, a trigger).
    ByUser,
}

impl TaskDiscoverer {
    fn last_day(&self) -> Option<NaiveDate> {
        self.guard.read::<Option<NaiveDate>>("discovery_last_day").ok().and_then(|(d, _)| d)
    }

    /// The day's run, once the local hour has come on one of `discovery.days` and no menu
    /// went out today.
    pub async fn run_if_due(&mut self, now: DateTime<Utc>) -> Discovered {
        let local = now.with_timezone(&self.tz);
        let today = local.date_naive();
        if !self.cfg.enabled
            || local.hour() < self.cfg.hour
            || !allowed_on(&self.cfg.days, today)
            || self.last_day() == Some(today)
            || !self.backoff.attempt(now, self.tz)
        {
            return Discovered::NotDue;
        }
        let r = self.run(now, Asked::Daily).await;
        match &r {
            Discovered::Failed(e) => self.backoff.failed(now, e),
            _ => self.backoff.succeeded(),
        }
        r
    }

    /// A run: the daily one sends no menu that offers nothing new; one the user asked for
    /// (`raven discover`) sends what it finds.
    pub async fn run(&mut self, now: DateTime<Utc>, asked: Asked) -> Discovered {
        let today = now.with_timezone(&self.tz).date_naive();
        let memory = std::fs::read_to_string(&self.memory_md).unwrap_or_default();
        let lang = self.language.resolve(&memory);
        let options = match self.held.take_for(today) {
            Some(held) => held,
            None => {
                let heartbeat = std::fs::read_to_string(&self.heartbeat_md).unwrap_or_default();
                match self.propose(&memory, &heartbeat, now, lang).await {
                    Ok(o) => o,
                    Err(e) => return Discovered::Failed(e.to_string()),
                }
            }
        };
        if options.is_empty() {
            self.mark(today);
            return Discovered::NothingToPropose;
        }
        if asked == Asked::Daily && !Offered(&self.guard).any_new(&options, today) {
            self.mark(today);
            return Discovered::NothingNew;
        }
        let offered = options.clone();
        let menu = PendingDecision {
            id: String::new(),
            session: self.target.clone(),
            question: question(lang).into(),
            options,
            created_at: now,
            expires_at: now + Duration::minutes(self.cfg.menu_ttl_minutes),
            state: PendingState::Open,
        };
        let shown: Vec<MenuOption> =
            menu.options.iter().map(|o| MenuOption { title: o.title.clone(), reason: o.reason.clone() }).collect();
        let text = render_menu(question(lang), &shown, lang);
        let nudge = menu_nudge(&self.target, &text);
        let (menus, dispatcher, target) = (self.menus.clone(), self.dispatcher.clone(), self.target.clone());
        let gated = dispatch_through(&self.policy, nudge, || async move {
            let menu = menus.offer(menu, now)?;
            let count = menu.options.len();
            let shown = format!("{text}\n(menu {})", menu.id);
            let said = Dispatch {
                nudge_id: format!("menu-{}", menu.id),
                topic: "task discovery".into(),
                priority: Priority::Low,
                source: Source::Discovery,
                job: None,
                items: Vec::new(),
            };
            let r = dispatcher.post(std::slice::from_ref(&target), &shown, &said, None).await;
            if r.delivered {
                Ok((menu.id, count))
            } else {
                let _ = menus.transition(&menu.id, &PendingState::Open, PendingState::Cancelled);
                Err(DiscoveryError::NotDelivered(r.error.unwrap_or_default()))
            }
        })
        .await;
        match gated {
            Gated::Delivered((menu_id, options)) => {
                self.mark(today);
                Offered(&self.guard).remember(&offered, today);
                Discovered::Sent { menu_id, options }
            }
            // Tried again on a later tick (the quiet hours end, a quota frees), as proposed.
            Gated::Denied(v) => {
                self.held.keep(today, offered);
                let layer = v.layer.map(|l| format!("layer {}: ", l.number())).unwrap_or_default();
                Discovered::Denied(format!("{layer}{}", v.reason))
            }
            Gated::Failed(e) => Discovered::Failed(e.to_string()),
            Gated::Unavailable(e) => Discovered::Failed(e),
        }
    }

    fn mark(&self, day: NaiveDate) {
        if let Err(e) = self.guard.update("discovery_last_day", |d: &mut Option<NaiveDate>| *d = Some(day)) {
            tracing::warn!("the day of the discovery run is not kept: {e}");
        }
    }

    async fn propose(
        &self,
        memory: &str,
        heartbeat: &str,
        now: DateTime<Utc>,
        lang: Language,
    ) -> Result<Vec<Choice>, DiscoveryError> {
        let mut options = if self.provider.name() == "rules" {
            rules_options(memory, heartbeat, (now, self.tz, self.order), lang)
        } else {
            // The end of the log from its first whole line; a byte that is not UTF-8 spoils
            // its own line, not the history.
            let tail = crate::store::files::tail(&self.history_md, HISTORY_TAIL).ok().flatten();
            self.llm_options(memory, tail.as_deref().unwrap_or_default(), heartbeat, now).await?
        };
        options.truncate(self.cfg.max_options.max(1));
        Ok(options)
    }

    async fn llm_options(
        &self,
        memory: &str,
        history: &str,
        heartbeat: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<Choice>, DiscoveryError> {
        let system = format!(
            "Propose up to {} concrete tasks you could do for the user today, from their notes. \
             Call propose_tasks; each option is a reply (text to tell them) or a spawn (a task \
             for a helper agent); set confirm for anything with side effects.",
            self.cfg.max_options
        );
        let tool = propose_schema();
        let budget = self.provider.prompt_budget();
        let schema = tool.parameters.to_string();
        let allowance = budget.left_after([system.as_str(), schema.as_str(), tool.description.as_str()], 2);
        let user = super::prompt::render(&budget, allowance, memory, history, heartbeat, now, self.tz, self.order);
        let req = CompletionRequest {
            messages: vec![ChatMessage::system(system), ChatMessage::user(user)],
            tools: vec![tool],
            tool_choice: Some(PROPOSE_TOOL.into()),
            generation: Generation { max_tokens: 512, temperature: 0.2, caller: Caller::Other },
            context: None,
        };
        let reply = self.provider.complete(&req).await?;
        match reply.first_call() {
            Some(call) if call.name == PROPOSE_TOOL => Ok(parse_options(&call.arguments)?),
            _ => Err(DiscoveryError::NoProposal(format!("{reply:?}"))),
        }
    }
}

/// The `propose_tasks` tool.
fn propose_schema() -> ToolSchema {
    ToolSchema {
        name: PROPOSE_TOOL.into(),
        description: "The menu of tasks.".into(),
        parameters: json!({"type": "object", "properties": {"options": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "title": {"type": "string"}, "reason": {"type": "string"},
                        "kind": {"type": "string", "enum": ["reply", "spawn"]},
                        "text": {"type": "string"}, "task": {"type": "string"}, "confirm": {"type": "boolean"}},
                    "required": ["title", "reason", "kind"]}}}, "required": ["options"]}),
    }
}

/// The `propose_tasks` arguments as options; a malformed option is an error, not skipped.
pub fn parse_options(args: &Value) -> Result<Vec<Choice>, OptionError> {
    let items = args.get("options").and_then(Value::as_array).ok_or(OptionError::NotAnArray)?;
    items
        .iter()
        .map(|o| {
            let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty());
            let title = s("title").ok_or(OptionError::NoTitle)?.to_owned();
            let reason = s("reason").unwrap_or_default().to_owned();
            let action = match s("kind") {
                Some("reply") => ChoiceAction::Reply { text: s("text").ok_or(OptionError::NoText)?.into() },
                Some("spawn") => ChoiceAction::Spawn { task: s("task").ok_or(OptionError::NoTask)?.into() },
                other => return Err(OptionError::Kind(other.map(str::to_owned))),
            };
            let confirm = o.get("confirm").and_then(Value::as_bool).unwrap_or(false);
            Ok(Choice { title, reason, action, confirm })
        })
        .collect()
}

/// The rules provider's menu: a reminder before each open deadline or event still ahead (a
/// cron tool call), then each unchecked HEARTBEAT.md item as a confirmed spawn.
pub fn rules_options(
    memory: &str,
    heartbeat: &str,
    reading: (DateTime<Utc>, Tz, crate::time::DateOrder),
    lang: Language,
) -> Vec<Choice> {
    let (now, tz, order) = reading;
    let mut out = Vec::new();
    for d in parse_deadlines(&memory.into(), now, tz, order, &Default::default()) {
        let Some(option) = reminder_option(&d, now, tz, lang) else { continue };
        out.push(option);
    }
    for task in crate::heartbeat::decision::open_tasks(heartbeat) {
        let (title, reason) = match lang {
            Language::English => (format!("Work on “{task}”"), "open in HEARTBEAT.md"),
            Language::Chinese => (format!("处理「{task}」"), "HEARTBEAT.md 中未完成"),
        };
        out.push(Choice {
            title,
            reason: reason.into(),
            action: ChoiceAction::Spawn { task: task.clone() },
            confirm: true,
        });
    }
    out
}

/// What the gate is asked for a menu going to `target`.
fn menu_nudge(target: &str, text: &str) -> Nudge {
    Nudge {
        action: Action::Nudge,
        session_key: Some(target.to_owned()),
        content: text.to_owned(),
        priority: Priority::Low,
        topic: Some("task discovery".into()),
        solicited: false,
    }
}

/// The discoverer as the runner's hook.
pub struct DiscoveryRun(pub TaskDiscoverer);

impl DiscoveryHook for DiscoveryRun {
    fn maybe_run(&mut self, now: DateTime<Utc>) -> LocalBoxFuture<'_, Discovered> {
        Box::pin(async move {
            let r = self.0.run_if_due(now).await;
            if r != Discovered::NotDue {
                tracing::info!(?r, "task discovery");
            }
            r
        })
    }

    fn run_now(&mut self, now: DateTime<Utc>) -> LocalBoxFuture<'_, Discovered> {
        Box::pin(async move {
            let r = self.0.run(now, Asked::ByUser).await;
            tracing::info!(?r, "task discovery (requested)");
            r
        })
    }
}

impl Discovered {
    /// Its journal line; `None` when the run was not due.
    pub fn event(&self, requested: bool) -> Option<Event> {
        let run = |outcome: &str, reason: Option<&String>| DiscoveryLine {
            outcome: outcome.to_owned(),
            requested,
            menu_id: None,
            options: None,
            reason: reason.cloned(),
        };
        let line = match self {
            Discovered::NotDue => return None,
            Discovered::NothingToPropose => run("nothing_to_propose", None),
            Discovered::NothingNew => run("nothing_new", None),
            Discovered::Denied(why) => run("denied", Some(why)),
            Discovered::Failed(why) => run("failed", Some(why)),
            Discovered::Sent { menu_id, options } => {
                DiscoveryLine { menu_id: Some(menu_id.clone()), options: Some(*options), ..run("sent", None) }
            }
        };
        Some(Event::Discovery(line))
    }
}

/// A reminder an hour before a timed item, or at 09:00 on a whole day's morning; `None` when
/// that moment has passed.
pub(super) fn reminder_option(
    d: &crate::context::deadlines::Deadline,
    now: DateTime<Utc>,
    tz: Tz,
    lang: Language,
) -> Option<Choice> {
    let at = match d.all_day {
        false => d.due - Duration::hours(1),
        true => d.due.with_timezone(&tz).date_naive().and_hms_opt(9, 0, 0)?.and_local_timezone(tz).earliest()?.to_utc(),
    };
    let offer = crate::context::words::offer(d, now, tz, lang);
    (at > now).then(|| Choice {
        title: offer.title,
        reason: offer.reason,
        action: ChoiceAction::Tool {
            name: "cron".into(),
            args: json!({"action": "add", "message": offer.message, "at": at.to_rfc3339()}),
        },
        confirm: false,
    })
}
