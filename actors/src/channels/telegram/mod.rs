//! Telegram, through the Bot API: long polling (`getUpdates`) with the next offset and the
//! handled update ids kept in `gateway/telegram.json`, so a restart neither loses nor repeats
//! an update; `sendMessage` in MarkdownV2, split at 4,096 characters, paced within
//! Telegram's limits (see [`pace`]), with the feedback
//! buttons under a rated proactive message and one button an option under a discovery menu;
//! a tap is a `callback_query`, answered. Only the
//! users in `allowed_users` are heard; anyone else is dropped (and logged), never answered.

mod api;
mod pace;
pub mod render;

use super::access::Allowed;
use super::buttons::Tapped;
use super::state::ChannelState;
use super::{Adapter, ChannelError, Inbox};
use crate::config::TelegramConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use api::BotApi;
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Handled update ids kept (the offset covers older ones).
const HANDLED_KEPT: usize = 500;

/// What survives a restart.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct Offsets {
    /// The next update id to ask for.
    offset: i64,
    /// The update ids handled most recently.
    handled: Vec<i64>,
    /// The group chats an allowed user wrote from (Raven answers there too).
    chats: Vec<String>,
    /// When the last update came: after a week without any, Telegram may start its ids
    /// anew, lower than the saved offset.
    last_update_at: Option<chrono::DateTime<chrono::Utc>>,
}

pub struct Telegram {
    api: BotApi,
    allowed: Allowed,
    users: Vec<String>,
    home: Option<String>,
    poll_timeout_s: u64,
    state: ChannelState,
    /// Parts of a long message already sent, by delivery id: a retry sends only the rest.
    sent_parts: Mutex<HashMap<String, usize>>,
    /// Telegram's sending limits, kept ahead of time.
    pacer: Mutex<pace::Pacer>,
}

impl Telegram {
    pub fn new(dir: &DataDir, c: &TelegramConfig) -> Result<Self, ChannelError> {
        let token = super::secret(&c.token_env, "channels.telegram.token_env")?;
        let timeout = Duration::from_secs(c.poll_timeout_s + 15);
        let api = BotApi::new(&c.api_base, &token, timeout, Duration::from_secs(c.max_retry_after_s))?;
        Ok(Telegram {
            api,
            allowed: Allowed::new("telegram", &c.allowed_users),
            users: c.allowed_users.iter().map(|u| u.trim().to_owned()).collect(),
            home: c.allowed_users.first().cloned(),
            poll_timeout_s: c.poll_timeout_s,
            state: ChannelState::new(dir, "telegram"),
            sent_parts: Mutex::new(HashMap::new()),
            pacer: Mutex::new(pace::Pacer::default()),
        })
    }

    /// Sends `text` to `chat_id`, part after part; buttons under the last.
    async fn send(&self, chat_id: &str, key: &str, body: &str, buttons: Option<Value>) -> Result<(), ChannelError> {
        let parts = render::split(body, render::MAX_CHARS);
        let done = self.sent_parts.lock().unwrap_or_else(|p| p.into_inner()).get(key).copied().unwrap_or(0);
        for (i, part) in parts.iter().enumerate().skip(done) {
            let mut req = json!({"chat_id": chat_id, "text": render::escape(part), "parse_mode": "MarkdownV2"});
            if let (true, Some(b)) = (i + 1 == parts.len(), &buttons) {
                req["reply_markup"] = b.clone();
            }
            self.wait_for_a_slot(chat_id).await;
            if let Err(e) = self.api.call("sendMessage", &req).await {
                if matches!(e, ChannelError::Refused(_)) {
                    // Not tried again: nothing to resume.
                    self.sent_parts.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
                }
                return Err(e);
            }
            self.sent_parts.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_owned(), i + 1);
        }
        self.sent_parts.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        Ok(())
    }

    /// Waits until a message to `chat_id` keeps within Telegram's limits.
    async fn wait_for_a_slot(&self, chat_id: &str) {
        let wait = self.pacer.lock().unwrap_or_else(|p| p.into_inner()).book(chat_id, std::time::Instant::now());
        if !wait.is_zero() {
            tracing::debug!(chat_id, "telegram: waiting {wait:?} to keep within its sending limits");
            actix_rt::time::sleep(wait).await;
        }
    }

    /// One long poll and what it brought, in order; the offset moves past each update once
    /// it is handled, so what the supervisor could not take is asked for again.
    async fn poll(&self, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let mut offsets: Offsets = self.state.load();
        let stale = offsets.last_update_at.is_some_and(|t| chrono::Utc::now() - t > chrono::Duration::days(6));
        let req = json!({
            // A stale offset could confirm away the updates of a sequence begun anew; the
            // handled ids keep those already seen from being handled twice.
            "offset": if stale { 0 } else { offsets.offset },
            "timeout": self.poll_timeout_s,
            "allowed_updates": ["message", "callback_query"],
        });
        let updates = self.api.call("getUpdates", &req).await?;
        inbox.alive("telegram");
        for update in updates.as_array().into_iter().flatten() {
            let Some(id) = update.get("update_id").and_then(Value::as_i64) else { continue };
            if !offsets.handled.contains(&id) {
                if let Some(chat) = self.handle(update, inbox).await? {
                    if !offsets.chats.contains(&chat) && !self.users.contains(&chat) {
                        offsets.chats.push(chat);
                    }
                }
                offsets.handled.push(id);
                let over = offsets.handled.len().saturating_sub(HANDLED_KEPT);
                offsets.handled.drain(..over);
            }
            offsets.offset = if stale { id + 1 } else { offsets.offset.max(id + 1) };
            offsets.last_update_at = Some(chrono::Utc::now());
            self.state.save(&offsets).map_err(|e| ChannelError::Transient(format!("gateway/telegram.json: {e}")))?;
        }
        Ok(())
    }

    /// Hands one update to the inbox; the chat an allowed user wrote from.
    async fn handle(&self, update: &Value, inbox: &dyn Inbox) -> Result<Option<String>, ChannelError> {
        if let Some(m) = update.get("message") {
            let from = id_text(&m["from"]["id"]);
            let chat = id_text(&m["chat"]["id"]);
            let text = m.get("text").and_then(Value::as_str).unwrap_or_default();
            if !self.allowed.admits(&from) || text.trim().is_empty() || chat.is_empty() {
                return Ok(None);
            }
            inbox.message("telegram", &chat, text).await?;
            return Ok(Some(chat));
        }
        if let Some(q) = update.get("callback_query") {
            self.tapped(q, inbox).await?;
        }
        Ok(None)
    }

    /// The chat `chat_id` names, when Raven may write there: an allowed user's own chat, a
    /// group chat one of them wrote from, or (`default`) the first allowed user's.
    fn reachable(&self, chat_id: &str) -> Result<String, OutletError> {
        let chat = chat_id.trim();
        if chat.is_empty() || chat == "default" {
            return self
                .home
                .clone()
                .ok_or_else(|| OutletError::Refused("no allowed Telegram user to write to".into()));
        }
        let known =
            self.users.iter().any(|u| u == chat) || self.state.load::<Offsets>().chats.iter().any(|c| c == chat);
        match known {
            true => Ok(chat.to_owned()),
            false => Err(OutletError::Refused(format!(
                "Telegram chat `{chat}` is neither an allowed user's nor a group one of them wrote from"
            ))),
        }
    }

    /// A tap on a button: a verdict, or a menu pick (the turn `/pick <menu> <n>` would be).
    /// The tap is answered at once (Telegram stops the button's spinner); a pick's turn
    /// follows.
    async fn tapped(&self, q: &Value, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let from = id_text(&q["from"]["id"]);
        if !self.allowed.admits(&from) {
            return Ok(());
        }
        let data = q.get("data").and_then(Value::as_str).unwrap_or_default();
        let (words, pick) = match Tapped::decode(data) {
            Some(Tapped::Verdict { verdict, nudge }) => {
                (inbox.verdict(&nudge, verdict).unwrap_or_else(|e| e.to_string()), None)
            }
            Some(Tapped::Pick { menu, n }) => (format!("Picked {n}."), Some(format!("/pick {menu} {n}"))),
            None => ("This button is not one of Raven's.".to_owned(), None),
        };
        let answer = json!({"callback_query_id": q["id"], "text": words});
        if let Err(e) = self.api.call("answerCallbackQuery", &answer).await {
            tracing::warn!("telegram: a tap was taken but not answered: {e}");
        }
        if let Some(pick) = pick {
            let chat = id_text(&q["message"]["chat"]["id"]);
            inbox.message("telegram", if chat.is_empty() { &from } else { &chat }, &pick).await?;
        }
        Ok(())
    }
}

/// A Telegram id (a number in JSON) as text.
fn id_text(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

impl Outlet for Telegram {
    fn channel(&self) -> &str {
        "telegram"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            let buttons = render::keyboard(text);
            let chat = self.reachable(&text.chat_id)?;
            let sent = self.send(&chat, &text.delivery_id, &super::body(text), buttons).await;
            sent.map_err(OutletError::from)
        })
    }
}

impl Adapter for Telegram {
    fn listen<'a>(&'a self, inbox: &'a dyn Inbox) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(async move {
            loop {
                self.poll(inbox).await?;
            }
        })
    }

    fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(async move {
            let chat = self.home.clone().ok_or_else(|| {
                ChannelError::Config("`channels.telegram.allowed_users` names no user to send to".into())
            })?;
            let me = self.api.call("getMe", &json!({})).await?;
            let bot = me.get("username").and_then(Value::as_str).unwrap_or("the bot").to_owned();
            let text = "Raven test message: this channel works. Replies here reach your agent.";
            self.send(&chat, "test", text, None).await?;
            Ok(format!("sent a test message from @{bot} to Telegram chat {chat}"))
        })
    }
}
