//! Telegram, through the Bot API: long polling (`getUpdates`, see [`listen`]) with the next
//! offset and the handled update ids kept in `gateway/telegram.json`, so a restart neither
//! loses nor repeats an update, and an update that cannot be handled is skipped, never asked
//! for again for ever; `sendMessage` in MarkdownV2, split at 4,096 characters, paced within
//! Telegram's limits (see [`pace`]), with the feedback
//! buttons under a rated proactive message and one button an option under a discovery menu;
//! a tap is a `callback_query`, answered. Only the
//! users in `allowed_users` are heard; anyone else is dropped (and logged), never answered.
//!
//! A send whose request went out but whose answer did not come (a timeout) or came cut short
//! may have been delivered, and the Bot API has no idempotency key and no way to list what a
//! bot sent: it is not sent again (at most once), but refused with a note saying it may have
//! been delivered (a dead letter `raven outbox --dead` shows). A send that plainly failed (no
//! connection, a 5xx, a 200 page that is not the Bot API's answer) waits in the outbox.

mod api;
mod commands;
mod listen;
mod pace;
pub(crate) mod render;
#[cfg(test)]
mod tests;
mod updates;

use super::access::Allowed;
use super::state::ChannelState;
use super::{Adapter, ChannelError, Inbox};
use crate::config::TelegramConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use api::{BotApi, CallError};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

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
    /// What keeps failing on the listening side.
    stuck: Mutex<updates::Stuck>,
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
            stuck: Mutex::new(updates::Stuck::default()),
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
                let e = send_failed(e, i, parts.len());
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

    fn stuck(&self) -> std::sync::MutexGuard<'_, updates::Stuck> {
        self.stuck.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until a message to `chat_id` keeps within Telegram's limits.
    async fn wait_for_a_slot(&self, chat_id: &str) {
        let wait = self.pacer.lock().unwrap_or_else(|p| p.into_inner()).book(chat_id, std::time::Instant::now());
        if !wait.is_zero() {
            tracing::debug!(chat_id, "telegram: waiting {wait:?} to keep within its sending limits");
            actix_rt::time::sleep(wait).await;
        }
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
}

/// What a failed `sendMessage` of part `i` of `n` means for the message: a send that may have
/// been delivered is refused (not sent twice); a page that is not the Bot API's answer (a
/// captive portal's) waits, like a 502.
fn send_failed(e: CallError, i: usize, n: usize) -> ChannelError {
    let uncertain = match &e {
        CallError::Failed(_) => false,
        CallError::NotJson { body, .. } => looks_taken(body),
        CallError::NoAnswer(_) | CallError::CutShort(_) => true,
    };
    if !uncertain {
        return e.into();
    }
    let part = if n > 1 { format!(" (part {} of {n}; the rest is not sent)", i + 1) } else { String::new() };
    ChannelError::Refused(format!(
        "{e}: the message may have been delivered{part}, so it is not sent again (Telegram cannot say whether it was, and a second try could show it twice)"
    ))
}

/// Whether `body` is the start of the Bot API's yes (`{"ok":true`), cut short.
fn looks_taken(body: &[u8]) -> bool {
    let head: Vec<u8> = body.iter().take(64).copied().filter(|b| !b.is_ascii_whitespace()).collect();
    head.starts_with(br#"{"ok":true"#)
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
            let me = self.api.call("getMe", &json!({})).await.map_err(ChannelError::from)?;
            let bot = me.get("username").and_then(Value::as_str).unwrap_or("the bot").to_owned();
            let text = "Raven test message: this channel works. Replies here reach your agent.";
            self.send(&chat, "test", text, None).await?;
            let menu = match self.offer_commands().await {
                Ok(()) => "and set the bot's command menu".to_owned(),
                Err(why) => format!("(the command menu was not set: {why}; the commands work without it)"),
            };
            Ok(format!("sent a test message from @{bot} to Telegram chat {chat}, {menu}"))
        })
    }
}
