//! Matrix, through the client-server API (no end-to-end encryption: the room must be an
//! unencrypted one). The bot logs in with an access token or a password (the token it gets
//! is kept in `gateway/matrix.json` with the `/sync` position, so a restart neither repeats
//! nor loses an event and a resent message keeps its transaction id). Text messages from the
//! allowed users in the configured room are USER turns; a reaction (👍, 👎, ⏰) to one of
//! Raven's nudges is a verdict (and `/ok` or `/stop` sent as a reply to one is aimed at it),
//! and a keycap reaction (1️⃣, 2️⃣, …) to a discovery menu picks that option, as typing
//! `/pick <menu> <n>` would. A message is sent with its delivery id as
//! the transaction id, so a redelivery is not shown twice. Every answer is read within bounds
//! ([`api`]), and a gap is read back within a number of pages and a time ([`gap`]).

mod api;
mod gap;
#[cfg(test)]
mod tests;

use super::access::Allowed;
use super::state::ChannelState;
use super::{Adapter, ChannelError, Inbox};
use crate::config::MatrixConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use futures_util::future::LocalBoxFuture;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use raven_proto::OutboundText;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::AtomicU32;
use std::sync::Mutex;
use std::time::Duration;

/// Event ids remembered (handled ones, and Raven's own nudges by event id).
const KEPT: usize = 500;

/// What survives a restart.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    access_token: Option<String>,
    next_batch: Option<String>,
    /// Events already handed to the supervisor.
    handled: Vec<String>,
    /// Raven's nudges in the room: event id → short nudge id (what a reaction rates).
    nudges: Vec<(String, String)>,
    /// Raven's discovery menus in the room: event id → menu id (what a keycap reaction picks from).
    menus: Vec<(String, String)>,
    /// The server time of the last event seen in the room: how far back a gap is read.
    last_ts: i64,
}

pub struct Matrix {
    client: reqwest::Client,
    base: String,
    user_id: String,
    room_id: String,
    token_env: Option<String>,
    password: Option<String>,
    allowed: Allowed,
    sync_timeout_s: u64,
    state: ChannelState,
    saved: Mutex<Saved>,
    /// Gaps read back only in part, with no event, in a row.
    gaps_cut: AtomicU32,
}

fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

impl Matrix {
    pub fn new(dir: &DataDir, c: &MatrixConfig) -> Result<Self, ChannelError> {
        let token_env = std::env::var(&c.access_token_env).ok().filter(|t| !t.trim().is_empty());
        let password = std::env::var(&c.password_env).ok().filter(|t| !t.is_empty());
        if token_env.is_none() && password.is_none() {
            return Err(ChannelError::Config(format!(
                "set the environment variable {} (an access token) or {} (the bot's password)",
                c.access_token_env, c.password_env
            )));
        }
        let state = ChannelState::new(dir, "matrix");
        let saved: Saved = state.load();
        Ok(Matrix {
            client: super::http_client(Duration::from_secs(c.sync_timeout_s + 15))?,
            base: c.homeserver.trim_end_matches('/').to_owned(),
            user_id: c.user_id.clone(),
            room_id: c.room_id.clone(),
            token_env,
            password,
            allowed: Allowed::new("matrix", &c.allowed_users),
            sync_timeout_s: c.sync_timeout_s,
            state,
            saved: Mutex::new(saved),
            gaps_cut: AtomicU32::new(0),
        })
    }

    fn saved(&self) -> std::sync::MutexGuard<'_, Saved> {
        self.saved.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn save(&self) -> Result<(), ChannelError> {
        let saved = self.saved().clone();
        self.state.save(&saved).map_err(|e| ChannelError::Transient(format!("gateway/matrix.json: {e}")))
    }

    /// The access token: the configured one, the one kept from the last login, or a new login.
    async fn token(&self) -> Result<String, ChannelError> {
        if let Some(t) = &self.token_env {
            return Ok(t.clone());
        }
        if let Some(t) = self.saved().access_token.clone() {
            return Ok(t);
        }
        let body = json!({
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": self.user_id},
            "password": self.password.clone().unwrap_or_default(),
            "initial_device_display_name": "Raven",
        });
        let answer = self.request(reqwest::Method::POST, "/login", None, Some(&body)).await?;
        let token =
            answer["access_token"].as_str().ok_or_else(|| ChannelError::Refused("login gave no token".into()))?;
        self.saved().access_token = Some(token.to_owned());
        self.save()?;
        Ok(token.to_owned())
    }

    /// One `/sync` and the room's new events, in order; the position moves once all are
    /// handled. The very first sync only takes the position (old history is not answered).
    async fn sync(&self, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let token = self.token().await?;
        let since = self.saved().next_batch.clone();
        let filter =
            json!({"room": {"rooms": [self.room_id], "timeline": {"limit": 100}}, "presence": {"not_types": ["*"]}});
        let mut path = format!("/sync?filter={}", enc(&filter.to_string()));
        if let Some(s) = &since {
            path.push_str(&format!("&since={}&timeout={}", enc(s), self.sync_timeout_s * 1000));
        }
        let answer = self.request(reqwest::Method::GET, &path, Some(&token), None).await?;
        inbox.alive("matrix");
        if since.is_none() {
            // History before the first sync is not answered, nor read back as a gap later.
            self.saved().last_ts = chrono::Utc::now().timestamp_millis();
        }
        if since.is_some() {
            let timeline = &answer["rooms"]["join"][&self.room_id]["timeline"];
            let (mut events, trouble) = match timeline["limited"].as_bool() {
                Some(true) => self.read_gap(&token, timeline["prev_batch"].as_str()).await?,
                _ => (Vec::new(), None),
            };
            events.extend(timeline["events"].as_array().cloned().unwrap_or_default());
            for event in &events {
                self.handle(event, inbox).await?;
            }
            self.take_position(&answer)?;
            // Said once the sync is done: the channel shows `failing`, then syncs on.
            return trouble.map_or(Ok(()), Err);
        }
        self.take_position(&answer)
    }

    /// The sync position of `answer` kept: the next sync starts there.
    fn take_position(&self, answer: &Value) -> Result<(), ChannelError> {
        if let Some(next) = answer["next_batch"].as_str() {
            self.saved().next_batch = Some(next.to_owned());
            self.save()?;
        }
        Ok(())
    }

    async fn handle(&self, event: &Value, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let id = event["event_id"].as_str().unwrap_or_default().to_owned();
        let sender = event["sender"].as_str().unwrap_or_default();
        if let Some(ts) = event["origin_server_ts"].as_i64() {
            let mut saved = self.saved();
            saved.last_ts = saved.last_ts.max(ts);
        }
        if id.is_empty() || sender == self.user_id || self.saved().handled.contains(&id) {
            return Ok(());
        }
        if self.allowed.admits(sender) {
            let content = &event["content"];
            match event["type"].as_str() {
                Some("m.room.message") if content["msgtype"] == "m.text" => {
                    let body = content["body"].as_str().unwrap_or_default();
                    let aimed = self.aimed_by_reply(body, content);
                    let body = aimed.as_deref().unwrap_or(body);
                    if !body.trim().is_empty() {
                        inbox.message("matrix", &self.room_id, body).await?;
                    }
                }
                Some("m.reaction") => self.reaction(content, inbox).await?,
                _ => {}
            }
        }
        let mut saved = self.saved();
        saved.handled.push(id);
        let over = saved.handled.len().saturating_sub(KEPT);
        saved.handled.drain(..over);
        drop(saved);
        self.save()
    }

    /// `/ok` or `/stop` sent as a reply to one of Raven's nudges: aimed at that nudge
    /// (`/stop [3fa2c1]`). A reply's quoted fallback (`> …` lines) is not part of the command.
    fn aimed_by_reply(&self, body: &str, content: &Value) -> Option<String> {
        let replied = content["m.relates_to"]["m.in_reply_to"]["event_id"].as_str()?;
        let own = body.lines().filter(|l| !l.starts_with('>')).collect::<Vec<_>>().join("\n");
        super::buttons::aimed_at_reply(&own, || {
            self.saved().nudges.iter().find(|(e, _)| e == replied).map(|(_, id)| id.clone())
        })
    }

    /// A reaction to one of Raven's nudges (a verdict) or menus (a pick, run as a USER turn).
    async fn reaction(&self, content: &Value, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let relates = &content["m.relates_to"];
        let (Some(target), Some(key)) = (relates["event_id"].as_str(), relates["key"].as_str()) else { return Ok(()) };
        let (nudge, menu) = {
            let saved = self.saved();
            let of = |list: &[(String, String)]| list.iter().find(|(e, _)| e == target).map(|(_, id)| id.clone());
            (of(&saved.nudges), of(&saved.menus))
        };
        if let (Some(nudge), Some(verdict)) = (nudge, super::buttons::verdict_of_reaction(key)) {
            match inbox.verdict(&nudge, verdict) {
                // A reaction is answered by itself, but "later" says when: the room is told.
                Ok(words) if verdict == "later" => {
                    self.send(&self.room_id, &format!("later-{target}"), &words).await?;
                }
                Ok(words) => tracing::info!("matrix: {words}"),
                Err(e) => tracing::warn!("matrix: a reaction was not recorded: {e}"),
            }
        }
        if let (Some(menu), Some(n)) = (menu, super::buttons::pick_of_reaction(key)) {
            inbox.message("matrix", &self.room_id, &format!("/pick {menu} {n}")).await?;
        }
        Ok(())
    }

    /// Joins the room (a no-op when already in it).
    async fn join(&self) -> Result<(), ChannelError> {
        let token = self.token().await?;
        let path = format!("/join/{}", enc(&self.room_id));
        self.request(reqwest::Method::POST, &path, Some(&token), Some(&json!({}))).await.map(|_| ())
    }

    async fn send(&self, room: &str, txn: &str, body: &str) -> Result<String, ChannelError> {
        let token = self.token().await?;
        let path = format!("/rooms/{}/send/m.room.message/{}", enc(room), enc(txn));
        let answer = self
            .request(reqwest::Method::PUT, &path, Some(&token), Some(&json!({"msgtype": "m.text", "body": body})))
            .await?;
        Ok(answer["event_id"].as_str().unwrap_or_default().to_owned())
    }
}

impl Outlet for Matrix {
    fn channel(&self) -> &str {
        "matrix"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            let room = super::home_only("matrix", &text.chat_id, &self.room_id)?;
            let nudge = super::buttons::rated_nudge(text);
            let menu = super::buttons::menu(text);
            let mut body = super::body(text);
            if nudge.is_some() {
                body.push_str("\n(react 👍 if this helped, ⏰ for later, 👎 to hear less of it)");
            }
            if let Some(hint) = menu.as_ref().and_then(|(_, n)| pick_hint(*n)) {
                body.push_str(&hint);
            }
            let event = self.send(room, &text.delivery_id, &body).await?;
            let mut saved = self.saved();
            match (nudge, menu) {
                (Some(n), _) => remember(&mut saved.nudges, event, n),
                (None, Some((m, _))) => remember(&mut saved.menus, event, m),
                (None, None) => return Ok(()),
            }
            drop(saved);
            self.save()?;
            Ok(())
        })
    }
}

/// Keeps `event → id` with the most recent [`KEPT`].
fn remember(list: &mut Vec<(String, String)>, event: String, id: String) {
    list.push((event, id));
    let over = list.len().saturating_sub(KEPT);
    list.drain(..over);
}

/// How to pick one of `n` options by reacting (as many as there are keycaps).
fn pick_hint(n: usize) -> Option<String> {
    let last = super::buttons::keycap(n.min(10))?;
    let first = super::buttons::keycap(1)?;
    Some(if n == 1 {
        format!("\n(react {first} to pick it, or type 1)")
    } else {
        format!("\n(react {first} to {last} to pick one, or type its number)")
    })
}

impl Adapter for Matrix {
    fn listen<'a>(&'a self, inbox: &'a dyn Inbox) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(async move {
            self.join().await?;
            loop {
                self.sync(inbox).await?;
            }
        })
    }

    /// Joins the room first (an invited bot is not in it yet), as `raven up` would.
    fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(async move {
            self.join().await?;
            let txn = format!("test-{}", chrono::Utc::now().timestamp_millis());
            let event = self.send(&self.room_id, &txn, "Raven test message: this channel works.").await?;
            Ok(format!("sent a test message to {} as {} (event {event})", self.room_id, self.user_id))
        })
    }
}
