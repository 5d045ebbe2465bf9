//! ntfy: push notifications to the user's phone, on ntfy.sh or a server of their own. Each
//! message is one publish (title, priority, tags). With `[gateway] public_url` set, a rated
//! nudge carries the feedback buttons as `http` actions that call the gateway's signed,
//! single-use links ([`super::taps`]); a morning brief carries "later" for each of its first
//! three items (ntfy shows three actions); without it there are no buttons (the phone could not
//! reach the gateway). What the phone publishes to the topic is read back ([`listen`]): the
//! commands and reminders of any chat, and `/ok`, `/stop`. Only a 2xx is a
//! publish: a redirect is a failure naming where it pointed (the message waits in the
//! outbox), and an error answer is kept cut and cleaned ([`super::remote`]).

mod listen;

use super::remote;
use super::state::ChannelState;
use super::taps::TapLinks;
use super::{Adapter, ChannelError};
use crate::config::NtfyConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use serde_json::{json, Value};
use std::time::Duration;

/// The most actions ntfy shows under one notification.
const MAX_ACTIONS: usize = 3;

pub struct Ntfy {
    client: reqwest::Client,
    server: String,
    topic: String,
    token: Option<String>,
    priority: u8,
    /// The gateway's public address and its links; `None` without `public_url`.
    links: Option<(String, TapLinks)>,
    link_ttl: chrono::Duration,
    /// Whether the topic is read back, and how often.
    listening: bool,
    poll_every: Duration,
    /// How long a read of the topic waits once nothing more comes.
    idle: Duration,
    /// Where the reading of the topic stands.
    state: ChannelState,
}

impl Ntfy {
    pub fn new(dir: &DataDir, c: &NtfyConfig, public_url: &str) -> Result<Self, ChannelError> {
        let token = std::env::var(&c.token_env).ok().filter(|t| !t.trim().is_empty());
        let public = public_url.trim().trim_end_matches('/');
        let links = match public.is_empty() {
            true => None,
            false => Some((public.to_owned(), TapLinks::open(dir).map_err(|e| ChannelError::Config(e.to_string()))?)),
        };
        let poll_every = Duration::from_secs(c.poll_s.max(1));
        Ok(Ntfy {
            client: super::http_client(Duration::from_secs(30))?,
            server: c.server.trim_end_matches('/').to_owned(),
            topic: c.topic.clone(),
            token,
            priority: c.priority.clamp(1, 5),
            links,
            link_ttl: chrono::Duration::seconds(c.link_ttl_s.max(60)),
            listening: c.listen,
            poll_every,
            idle: (poll_every / 4).min(listen::IDLE),
            state: ChannelState::new(dir, "ntfy"),
        })
    }

    /// The publish request for `text` (to `topic`).
    pub fn publication(&self, text: &OutboundText, topic: &str) -> Value {
        let content = crate::text::sanitize(&text.content);
        let mut body = json!({
            "topic": topic,
            "message": content,
            "title": if text.is_proactive() { "Raven ⏰" } else { "Raven" },
            "priority": self.priority,
            "tags": [listen::OWN_TAG],
        });
        if let (Some(items), Some((base, links))) = (super::buttons::brief_items(text), &self.links) {
            // ntfy shows at most three actions: "later" on each of the first three items.
            let until = chrono::Utc::now() + self.link_ttl;
            let actions: Vec<Value> = (1..)
                .zip(items.iter().take(MAX_ACTIONS))
                .map(|(n, item)| {
                    let url = format!("{base}{}", links.path(item, super::buttons::LATER.verdict, until));
                    json!({"action": "http", "label": format!("⏰ {n}"), "url": url, "method": "POST", "clear": false})
                })
                .collect();
            body["actions"] = Value::Array(actions);
        } else if let (Some(nudge), Some((base, links))) = (super::buttons::rated_nudge(text), &self.links) {
            let until = chrono::Utc::now() + self.link_ttl;
            let actions: Vec<Value> = super::buttons::BUTTONS
                .iter()
                .map(|b| {
                    let url = format!("{base}{}", links.path(&nudge, b.verdict, until));
                    json!({"action": "http", "label": b.label, "url": url, "method": "POST", "clear": true})
                })
                .collect();
            body["actions"] = Value::Array(actions);
        }
        body
    }

    async fn publish(&self, body: &Value) -> Result<(), ChannelError> {
        let mut req = self.client.post(&self.server).json(body);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let sent = req.send().await.map_err(|e| ChannelError::Transient(format!("ntfy: {e}")))?;
        let status = sent.status();
        if status.is_success() {
            return Ok(());
        }
        if status.is_redirection() {
            return Err(remote::redirected("ntfy", &sent));
        }
        let why = format!("ntfy answered {status}: {}", remote::error_text(sent).await);
        Err(super::failure(status.as_u16(), why))
    }
}

impl Outlet for Ntfy {
    fn channel(&self) -> &str {
        "ntfy"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            let topic = super::home_only("ntfy", &text.chat_id, &self.topic)?;
            self.publish(&self.publication(text, topic)).await.map_err(OutletError::from)
        })
    }
}

impl Adapter for Ntfy {
    fn listen<'a>(&'a self, inbox: &'a dyn super::Inbox) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        match self.listening {
            true => Box::pin(self.listen_to_topic(inbox)),
            false => Box::pin(futures_util::future::pending()),
        }
    }

    fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(async move {
            let text = super::test_message("ntfy", &self.topic);
            self.publish(&self.publication(&text, &self.topic)).await?;
            let buttons = match &self.links {
                Some((base, _)) => format!("feedback buttons call back to {base}"),
                None => "no feedback buttons: set `[gateway] public_url` to an address your phone can reach, \
                         and the buttons 👍 / later / stop appear under each nudge"
                    .to_owned(),
            };
            let heard = match self.listening {
                true => "what you publish to the topic from the app reaches Raven (try /help)",
                false => "what you publish to the topic is not read (`listen = false`)",
            };
            Ok(format!("published a test message to {}/{}; {buttons}; {heard}", self.server, self.topic))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn ntfy(dir: &std::path::Path, server: &MockServer) -> Ntfy {
        let config = NtfyConfig { server: server.uri(), topic: "raven-x".into(), ..NtfyConfig::default() };
        Ntfy::new(&DataDir::new(dir), &config, "").unwrap()
    }

    async fn answering(answer: ResponseTemplate) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(answer).mount(&server).await;
        server
    }

    /// A 301/302 (an `http://` server moved to `https://`) published nothing: the message
    /// waits, and the error says where the redirect pointed.
    #[actix_rt::test]
    async fn a_redirect_is_not_a_publish() {
        let tmp = tempfile::tempdir().unwrap();
        for status in [301, 302, 307] {
            let moved = ResponseTemplate::new(status).insert_header("location", "https://elsewhere.example/");
            let server = answering(moved).await;
            let text = crate::channels::test_message("ntfy", "raven-x");
            let failed = ntfy(tmp.path(), &server).deliver(&text).await.unwrap_err();
            assert!(
                matches!(failed, OutletError::Transient(ref why) if why.contains("redirect") && why.contains("https://elsewhere.example/")),
                "{status}: {failed:?}"
            );
            assert_eq!(server.received_requests().await.unwrap().len(), 1, "not followed");
        }
    }

    /// A huge error answer with escapes is read only to a bound, and kept cut and clean.
    #[actix_rt::test]
    async fn an_error_answer_is_kept_short_and_clean() {
        let tmp = tempfile::tempdir().unwrap();
        let body = format!("oops \x1b]0;PWNED\x07\x1b[2J{}", "E".repeat(4 * 1024 * 1024));
        let server = answering(ResponseTemplate::new(500).set_body_string(body)).await;
        let failed =
            ntfy(tmp.path(), &server).deliver(&crate::channels::test_message("ntfy", "raven-x")).await.unwrap_err();
        let OutletError::Transient(why) = failed else { panic!("{failed:?}") };
        assert!(why.starts_with("ntfy answered 500 Internal Server Error: oops E"), "{}", &why[..80]);
        assert!(why.chars().count() < remote::MAX_ERROR_CHARS + 64, "{} chars", why.chars().count());
        assert!(!why.contains('\x1b') && !why.contains("PWNED"), "{why}");
    }
}
