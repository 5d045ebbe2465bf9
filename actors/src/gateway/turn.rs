//! A message from the user, however it came in (`POST /inbound`, a chat channel), becomes a
//! USER turn on the supervisor here, and its answer comes back.

use super::supervisor::{Supervisor, SupervisorError};
use crate::sessions::file_name::{self, SessionNameError};
use raven_proto::control::{ControlRequest, ControlResponse};
use raven_proto::TurnRequest;

/// Where the reply of a user's message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplyTo {
    /// Back to the caller only: `POST /inbound` answers it as its HTTP answer.
    Caller,
    /// Through the conversation's channel as well: a chat channel's message.
    Channel,
}

/// What became of a turn the supervisor took.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Heard {
    /// The reply (none when the turn says nothing), delivered through the conversation's
    /// channel as well when asked ([`ReplyTo::Channel`]).
    Replied(Option<String>),
    /// The turn ran and failed; the supervisor says why.
    Failed(String),
}

/// Why a message did not become a turn.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotHeard {
    /// No session file can name this conversation (one conversation, one file).
    #[error(transparent)]
    Chat(SessionNameError),
    #[error(transparent)]
    Supervisor(SupervisorError),
    #[error("unexpected answer: {0:?}")]
    Unexpected(Box<ControlResponse>),
}

/// Runs `text` from `chat_id` of `channel` as a USER turn on the supervisor, its reply
/// returned, and delivered to the conversation too when `reply` says so.
pub(super) async fn user_turn(
    supervisor: &dyn Supervisor,
    (channel, chat_id): (&str, &str),
    text: &str,
    reply: ReplyTo,
) -> Result<Heard, NotHeard> {
    file_name::validate(channel, chat_id).map_err(NotHeard::Chat)?;
    let turn = inbound_turn(channel, chat_id, text);
    let deliver = reply == ReplyTo::Channel;
    match supervisor.ask(ControlRequest::Inbound { turn, deliver }).await.map_err(NotHeard::Supervisor)? {
        ControlResponse::Reply { text } => Ok(Heard::Replied(text)),
        ControlResponse::Refused { text } => Ok(Heard::Replied(Some(text))),
        ControlResponse::Error { message } => Ok(Heard::Failed(message)),
        other => Err(NotHeard::Unexpected(Box::new(other))),
    }
}

/// The USER turn of a message that came in through the gateway.
fn inbound_turn(channel: &str, chat_id: &str, text: &str) -> TurnRequest {
    let now = chrono::Utc::now();
    let id = format!("in-{}-{}", std::process::id(), now.timestamp_nanos_opt().unwrap_or_default());
    TurnRequest::from_user(id, channel, chat_id, text, now)
}
