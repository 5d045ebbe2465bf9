//! The chat channels the gateway hosts (`[channels.*]`): each adapter sends what the
//! supervisor pushes for its channel, and listens under its own supervision; what it hears
//! from an allowed sender comes here, to the [`GatewayInbox`]: a message becomes a USER turn
//! on the supervisor (its reply comes back through the same channel), a tap or a reaction a
//! feedback verdict.

use raven_actors::channels::health::HealthBoard;
use raven_actors::channels::{hosting, ChannelError, Inbox};
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outlets::Outlet;
use raven_actors::feedback::give::{give, GiveFeedback};
use raven_actors::feedback::NudgeFeedbackTracker;
use raven_actors::ipc::ControlClient;
use raven_actors::supervise::LocalBoxFuture;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

/// The enabled channels: an outlet for each that could be built, and why each other could
/// not (a missing secret, say; its messages wait in the outbox until it is fixed).
pub struct Channels {
    pub outlets: Vec<Arc<dyn Outlet>>,
    pub broken: Vec<(String, String)>,
}

/// Builds the enabled adapters and starts their listening loops.
pub fn start(dir: &DataDir, config: &RavenConfig, feedback: Arc<NudgeFeedbackTracker>) -> Channels {
    let health = HealthBoard::new(dir);
    let inbox: Rc<dyn Inbox> = Rc::new(GatewayInbox { socket: dir.socket(), feedback, health: health.clone() });
    let mut channels = Channels { outlets: Vec::new(), broken: Vec::new() };
    for name in config.channels.enabled() {
        match raven_actors::channels::build(dir, config, name) {
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

struct GatewayInbox {
    socket: PathBuf,
    /// The one tracker the gateway's `POST /feedback` and `/tap` write through, too.
    feedback: Arc<NudgeFeedbackTracker>,
    health: HealthBoard,
}

impl Inbox for GatewayInbox {
    fn message<'a>(
        &'a self,
        channel: &'a str,
        chat_id: &'a str,
        text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(async move {
            // A chat no session file can name is not heard (and not asked for again).
            if let Err(e) = raven_actors::sessions::file_name::validate(channel, chat_id) {
                tracing::warn!(channel, "a message was dropped: {e}");
                return Ok(());
            }
            let turn = super::inbound_turn(channel, chat_id, text);
            let mut c = ControlClient::connect(&self.socket).await.map_err(|e| ChannelError::Inbox(e.to_string()))?;
            match c.request(ControlRequest::Inbound { turn, deliver: true }).await {
                Ok(ControlResponse::Reply { .. }) => Ok(()),
                // The turn ran and failed: answered there; hearing it again would not help.
                Ok(ControlResponse::Error { message }) => {
                    tracing::warn!(channel, "a message from the user was not answered: {message}");
                    Ok(())
                }
                Ok(other) => Err(ChannelError::Inbox(format!("unexpected answer: {other:?}"))),
                Err(e) => Err(ChannelError::Inbox(e.to_string())),
            }
        })
    }

    fn verdict(&self, nudge: &str, verdict: &str) -> Result<String, ChannelError> {
        let req = GiveFeedback { nudge_id: Some(nudge.to_owned()), verdict: verdict.to_owned(), ..Default::default() };
        match give(&self.feedback, &req, chrono::Utc::now()) {
            Ok(given) => Ok(format!("Noted: {} ({}).", given.verdict, given.topic.unwrap_or(given.short_id))),
            Err(e) => Err(ChannelError::Refused(e.to_string())),
        }
    }

    fn alive(&self, channel: &str) {
        self.health.ok(channel);
    }
}
