//! Channel adapters: the chat apps and push services that carry Raven to the user's phone
//! (Telegram, Matrix, ntfy, email). Each is an [`Outlet`] (it sends, rendering the engine's
//! messages for its medium) and may also listen: what it hears from the user (a message, a
//! tap on a feedback button, a reaction) goes to an [`Inbox`], which the gateway process
//! implements by turning a message into a USER turn on the supervisor and a tap into a
//! feedback verdict. The gateway hosts and supervises them ([`hosting`]): an adapter that fails
//! or panics is started again, and never takes the others down.

pub(crate) mod access;
pub(crate) mod buttons;
pub(crate) mod email;
pub mod health;
pub(crate) mod hosting;
pub(crate) mod matrix;
pub(crate) mod ntfy;
pub(crate) mod remote;
pub(crate) mod state;
pub mod taps;
pub(crate) mod telegram;

use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use futures_util::future::LocalBoxFuture;
use std::sync::Arc;

/// What an adapter could not do.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The service could not be reached or answered with a failure worth retrying.
    #[error("{0}")]
    Transient(String),
    /// The service refused this message (a 400 on its text, a chat it may not reach):
    /// retrying it will not help.
    #[error("refused: {0}")]
    Refused(String),
    /// A setting is missing or wrong (named).
    #[error("{0}")]
    Config(String),
    /// The supervisor did not take what the user said; it is heard again later.
    #[error("the supervisor did not take it: {0}")]
    Inbox(String),
}

impl From<ChannelError> for OutletError {
    fn from(e: ChannelError) -> Self {
        match e {
            ChannelError::Transient(m) | ChannelError::Inbox(m) => OutletError::Transient(m),
            ChannelError::Refused(m) | ChannelError::Config(m) => OutletError::Refused(m),
        }
    }
}

/// Where an adapter hands what it hears from an allowed sender.
pub trait Inbox {
    /// A message from the user in `chat_id` of `channel`: a USER turn whose reply comes back
    /// through the channel's outlet. `Ok` once the supervisor took it.
    fn message<'a>(
        &'a self,
        channel: &'a str,
        chat_id: &'a str,
        text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ChannelError>>;
    /// A verdict on a proactive message (its id or short id); the words to show the user.
    fn verdict(&self, nudge: &str, verdict: &str) -> Result<String, ChannelError>;
    /// `channel` heard from its service just now (its health is `ok` again).
    fn alive(&self, channel: &str) {
        let _ = channel;
    }
    /// `channel` heard something it could not handle and skipped it: `why` (kept as its last
    /// error).
    fn skipped(&self, channel: &str, why: &str) {
        let _ = (channel, why);
    }
}

/// A channel the gateway hosts.
pub trait Adapter: Outlet {
    /// Listens for the user until it fails (or for ever); an adapter that only sends never
    /// returns.
    fn listen<'a>(&'a self, inbox: &'a dyn Inbox) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        let _ = inbox;
        Box::pin(futures_util::future::pending())
    }

    /// `raven channels test`: sends a test message; says what happened.
    fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>>;
}

/// The adapter of the enabled channel `name`, built from the config (a missing secret is an
/// error naming its variable).
pub fn build(dir: &DataDir, config: &RavenConfig, name: &str) -> Result<Arc<dyn Adapter>, ChannelError> {
    let c = &config.channels;
    Ok(match name {
        "telegram" => Arc::new(telegram::Telegram::new(dir, &c.telegram)?),
        "matrix" => Arc::new(matrix::Matrix::new(dir, &c.matrix)?),
        "ntfy" => Arc::new(ntfy::Ntfy::new(dir, &c.ntfy, &config.gateway.public_url)?),
        "email" => Arc::new(email::Email::new(&c.email)?),
        other => return Err(ChannelError::Config(format!("no channel is called `{other}`"))),
    })
}

/// The value of the environment variable `name`, or an error naming it and the key.
pub fn secret(name: &str, key: &str) -> Result<String, ChannelError> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| ChannelError::Config(format!("set the environment variable {name} (named by `{key}`)")))
}

/// What an HTTP status of a service means for the message: a 5xx, a 429 or a refusal of the
/// bot's own credentials (401, 403, 404 on a token the service does not know) is transient:
/// the message waits in the outbox until the service or the settings are right again (its
/// lifetime still applies). Any other 4xx is about this message: a refusal for good.
pub fn failure(status: u16, why: String) -> ChannelError {
    match status {
        401 | 403 | 404 | 408 | 429 | 500.. => ChannelError::Transient(why),
        _ => ChannelError::Refused(why),
    }
}

/// The text a chat shows for `text`: a proactive message gets a marker; escape sequences and
/// control characters are taken out.
pub fn body(text: &raven_proto::OutboundText) -> String {
    let content = crate::text::sanitize(&text.content);
    if text.is_proactive() {
        format!("⏰ {content}")
    } else {
        content
    }
}

/// The one chat `channel` sends to, `home`, for `chat` naming it (or `default`, or nothing);
/// any other chat is refused: a made-up target (a model's, say) never reaches a stranger.
pub fn home_only<'a>(channel: &str, chat: &str, home: &'a str) -> Result<&'a str, OutletError> {
    let chat = chat.trim();
    if chat.is_empty() || chat == "default" || chat.eq_ignore_ascii_case(home.trim()) {
        return Ok(home);
    }
    Err(OutletError::Refused(format!("the {channel} channel sends only to `{home}`, not to `{chat}`")))
}

/// The message `raven channels test` sends to `chat` of `channel`.
pub fn test_message(channel: &str, chat: &str) -> raven_proto::OutboundText {
    raven_proto::OutboundText {
        delivery_id: format!("test-{}", chrono::Utc::now().timestamp_millis()),
        channel: channel.to_owned(),
        chat_id: chat.to_owned(),
        content: "Raven test message: this channel works.".into(),
        extras: Default::default(),
    }
}

pub use remote::{http_client, CONNECT_TIMEOUT};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_writes_only_to_its_home() {
        assert_eq!(home_only("ntfy", "", "raven-x"), Ok("raven-x"));
        assert_eq!(home_only("ntfy", "default", "raven-x"), Ok("raven-x"));
        assert_eq!(home_only("email", "You@Example.org", "you@example.org"), Ok("you@example.org"));
        let refused = home_only("email", "someone@else.org", "you@example.org").unwrap_err();
        assert!(matches!(refused, OutletError::Refused(ref why) if why.contains("someone@else.org")), "{refused:?}");
    }

    #[test]
    fn a_refused_token_waits_and_a_refused_message_is_final() {
        for status in [401, 403, 404, 429, 500, 503] {
            assert!(matches!(failure(status, String::new()), ChannelError::Transient(_)), "{status}");
        }
        for status in [400, 413, 422] {
            assert!(matches!(failure(status, String::new()), ChannelError::Refused(_)), "{status}");
        }
    }
}
