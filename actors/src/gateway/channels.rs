//! The chat channels the gateway hosts (`[channels.*]`): each adapter sends what the
//! supervisor pushes for its channel, and listens under its own supervision; what it hears
//! from an allowed sender comes here, to the [`GatewayInbox`]: a message becomes a USER turn
//! on the supervisor (its reply comes back through the same channel), a tap or a reaction a
//! feedback verdict.

use super::supervisor::Supervisor;
use super::turn::{user_turn, Heard, NotHeard, ReplyTo};
use crate::channels::health::HealthBoard;
use crate::channels::{hosting, ChannelError, Inbox};
use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::delivery::outlets::Outlet;
use crate::feedback::give::GiveFeedback;
use crate::supervise::LocalBoxFuture;
use std::rc::Rc;
use std::sync::Arc;

/// The enabled channels: an outlet for each that could be built, and why each other could
/// not (a missing secret, say; its messages wait in the outbox until it is fixed).
pub(super) struct Channels {
    pub outlets: Vec<Arc<dyn Outlet>>,
    pub broken: Vec<(String, String)>,
}

/// Builds the enabled adapters and starts their listening loops.
pub(super) fn start(
    dir: &DataDir,
    config: &RavenConfig,
    supervisor: Arc<dyn Supervisor>,
    feedback: Arc<super::feedback::Feedback>,
) -> Channels {
    let health = HealthBoard::new(dir);
    let inbox: Rc<dyn Inbox> = Rc::new(GatewayInbox { supervisor, feedback, health: health.clone() });
    let mut channels = Channels { outlets: Vec::new(), broken: Vec::new() };
    for name in config.channels.enabled() {
        match crate::channels::build(dir, config, name) {
            Ok(adapter) => {
                channels.outlets.push(Arc::new(hosting::Hosted::new(adapter.clone(), health.clone())));
                actix_rt::spawn(hosting::supervise(adapter, inbox.clone(), health.clone()));
            }
            Err(e) => {
                tracing::warn!(channel = name, "the channel cannot start: {e}");
                health.failing(name, &e.to_string());
                channels.broken.push((name.to_owned(), e.to_string()));
            }
        }
    }
    channels
}

/// The most of a message from a chat that becomes a turn: what a session keeps of it anyway,
/// far below the control socket's frame.
const MAX_HEARD_BYTES: usize = 64 * 1024;

/// `text` cut at a character to [`MAX_HEARD_BYTES`], saying so.
fn within_bounds(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_HEARD_BYTES {
        return text.into();
    }
    let cut = (0..=MAX_HEARD_BYTES).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    tracing::warn!("a message of {} bytes from a chat was cut to {cut}", text.len());
    format!("{}\n[… cut: the message was {} bytes]", &text[..cut], text.len()).into()
}

/// Where the channels' listeners hand what they hear: a message goes to the supervisor as a
/// USER turn (the same way as `POST /inbound`), a verdict to the feedback log.
pub(super) struct GatewayInbox {
    pub supervisor: Arc<dyn Supervisor>,
    /// The one tracker the gateway's `POST /feedback` and `/tap` write through, too.
    pub feedback: Arc<super::feedback::Feedback>,
    pub health: HealthBoard,
}

impl Inbox for GatewayInbox {
    fn message<'a>(
        &'a self,
        channel: &'a str,
        chat_id: &'a str,
        text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(async move {
            let text = within_bounds(text);
            match user_turn(self.supervisor.as_ref(), (channel, chat_id), &text, ReplyTo::Channel).await {
                Ok(Heard::Replied(_)) => Ok(()),
                // The turn ran and failed: answered there; hearing it again would not help.
                Ok(Heard::Failed(message)) => {
                    tracing::warn!(channel, "a message from the user was not answered: {message}");
                    Ok(())
                }
                // A chat no session file can name is not heard (and not asked for again).
                Err(NotHeard::Chat(e)) => {
                    tracing::warn!(channel, "a message was dropped: {e}");
                    Ok(())
                }
                Err(e) => Err(ChannelError::Inbox(e.to_string())),
            }
        })
    }

    fn verdict(&self, nudge: &str, verdict: &str) -> Result<String, ChannelError> {
        let req = GiveFeedback { nudge_id: Some(nudge.to_owned()), verdict: verdict.to_owned(), ..Default::default() };
        let now = chrono::Utc::now();
        match self.feedback.give(&req, now) {
            Ok(given) => Ok(crate::cron::later::said(&given, self.feedback.verdicts.tz(), now)),
            Err(e) => Err(ChannelError::Refused(e.to_string())),
        }
    }

    fn alive(&self, channel: &str) {
        self.health.heard(channel);
    }

    fn skipped(&self, channel: &str, why: &str) {
        self.health.skipped(channel, why);
    }
}
