//! DeliveryHub (spec §6): the registry of channel outlets and the non-turn post path. A
//! message no outlet accepted goes to the persisted outbox (in the state database) and is
//! retried with backoff; its delivery id lets the receiver drop a redelivery. A
//! proactive message (one posted with a [`Dispatch`]) is written into its conversation, with
//! its `dispatched` record, when an outlet accepts it: now, or later from the outbox.

use super::conversation::Conversations;
use super::outlets::{Outlet, OutletError};
use crate::clock::SharedClock;
use crate::feedback::Dispatch;
use crate::journal::Journal;
use crate::policy::{Nudge, NudgePolicyService};
use crate::store::db::off_thread;
use crate::supervise::{Handle, LocalBoxFuture, Request, Serve, ServeAsync, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::OutboundText;
use std::collections::HashMap;
use std::sync::Arc;

pub use super::outbox::{Outbox, OutboxEntry, OutboxStore, SECTION};
pub use retry::{RetryOutbox, RetryReport, Watching};

mod retry;
mod sent;

pub struct DeliveryHubService {
    outlets: HashMap<String, Arc<dyn Outlet>>,
    /// Records the fires of messages the outbox delivers late.
    policy: Option<Handle<NudgePolicyService>>,
    store: Arc<dyn OutboxStore>,
    clock: SharedClock,
    backoff: Duration,
    max_backoff: Duration,
    conversations: Option<Conversations>,
    /// How long a rated proactive message may wait in the outbox, and how many may wait.
    nudge_ttl: Duration,
    max_waiting: usize,
    /// The channels that have (or will have) an outlet; `None`: any channel may get one later.
    channels: Option<super::targets::Channels>,
    journal: Journal,
    /// Where a message for a terminal no one watches goes.
    watched: super::watched::Watched,
    /// Which nudge reached which target lately: a copy routed where another went is not sent.
    sent: sent::SentLately,
}

impl DeliveryHubService {
    pub fn new(
        store: Arc<dyn OutboxStore>,
        clock: SharedClock,
        backoff: Duration,
        policy: Option<Handle<NudgePolicyService>>,
    ) -> Self {
        DeliveryHubService {
            outlets: HashMap::new(),
            policy,
            store,
            clock,
            backoff,
            max_backoff: Duration::hours(1),
            conversations: None,
            nudge_ttl: Duration::hours(6),
            max_waiting: 10_000,
            channels: None,
            journal: Journal::off(),
            watched: super::watched::Watched { cli_always: true, fallback: None },
            sent: sent::SentLately::default(),
        }
    }

    /// A message for `cli` counts only when someone watches (see [`super::watched`]); by
    /// default it always counts.
    pub fn with_watched(mut self, watched: super::watched::Watched) -> Self {
        self.watched = watched;
        self
    }

    /// Each outbox move (queued, delivered later, dropped, dead letter) goes to the journal.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// `delivery.outbox_ttl_nudge_h` and `delivery.outbox_max`.
    pub fn with_limits(mut self, nudge_ttl: Duration, max_waiting: usize) -> Self {
        self.nudge_ttl = nudge_ttl;
        self.max_waiting = max_waiting;
        self
    }

    /// Only these channels may wait for an outlet; a message for any other is refused.
    pub fn with_channels(mut self, channels: super::targets::Channels) -> Self {
        self.channels = Some(channels);
        self
    }

    /// Where delivered proactive messages are written (sessions and the feedback log).
    pub fn with_conversations(mut self, c: Conversations) -> Self {
        self.conversations = Some(c);
        self
    }
}

/// Writes a delivered proactive message into its conversation.
fn record_said(
    conversations: &Option<Conversations>,
    said: &Option<Dispatch>,
    outlet: Option<&Arc<dyn Outlet>>,
    text: &OutboundText,
    at: DateTime<Utc>,
) {
    if let (Some(c), Some(d)) = (conversations, said) {
        let visible = outlet.is_some_and(|o| o.seen());
        c.said(d, &text.channel, &text.chat_id, &text.content, visible, at);
    }
}

impl Service for DeliveryHubService {
    fn name(&self) -> &'static str {
        "DeliveryHub"
    }
}

/// Late binding: an outlet may register after the hub started.
pub struct RegisterOutlet(pub Arc<dyn Outlet>);

impl Request for RegisterOutlet {
    type Reply = ();
}

impl Serve<RegisterOutlet> for DeliveryHubService {
    fn serve(&mut self, RegisterOutlet(o): RegisterOutlet) {
        self.outlets.insert(o.channel().to_owned(), o);
    }
}

/// Deliver now, or keep in the outbox. `Ok` only when the outlet accepted it. `fire` is
/// what the gate records if the outbox delivers it later.
pub struct Post {
    pub text: OutboundText,
    pub fire: Option<Nudge>,
    /// A proactive message: what its conversation and the feedback log record.
    pub said: Option<Dispatch>,
    /// Not delivered by then, it is a dead letter (default: a rated message's TTL; none for
    /// the rest).
    pub expires_at: Option<DateTime<Utc>>,
}

impl Post {
    pub fn text(text: OutboundText) -> Self {
        Post { text, fire: None, said: None, expires_at: None }
    }

    /// A proactive message; its id goes with it (an outlet may show it).
    pub fn proactive(mut text: OutboundText, fire: Option<Nudge>, said: Dispatch) -> Self {
        text.extras.insert(raven_proto::NUDGE_ID.to_owned(), said.nudge_id.clone());
        if said.source.is_rated() {
            text.extras.insert(raven_proto::RATED.to_owned(), "true".to_owned());
        }
        if !said.items.is_empty() {
            let ids: Vec<String> = said.items.iter().map(|i| crate::feedback::short_id(&i.nudge_id)).collect();
            text.extras.insert(raven_proto::BRIEF_ITEMS.to_owned(), ids.join(","));
        }
        Post { text, fire, said: Some(said), expires_at: None }
    }

    /// Dead after `at` when no outlet took it by then.
    pub fn expiring(mut self, at: Option<DateTime<Utc>>) -> Self {
        self.expires_at = at;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostError {
    /// Kept in the outbox for a retry.
    Queued(String),
    /// Refused for good (and not kept), or the outbox could not be written.
    Dropped(String),
}

impl std::fmt::Display for PostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PostError::Queued(e) => write!(f, "not delivered, kept in the outbox: {e}"),
            PostError::Dropped(e) => write!(f, "not delivered: {e}"),
        }
    }
}

impl Request for Post {
    /// The target it went to (`channel:chat_id`: another channel than asked when no one
    /// watches the terminal, see [`super::watched`]).
    type Reply = Result<String, PostError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

fn backoff_after(attempts: u32, base: Duration, max: Duration) -> Duration {
    let factor = 1i32 << attempts.min(16);
    (base * factor).min(max)
}

impl ServeAsync<Post> for DeliveryHubService {
    fn serve_async(&mut self, post: Post) -> LocalBoxFuture<'static, Result<String, PostError>> {
        let Post { text, fire, said, expires_at } = post;
        let rated = said.as_ref().is_some_and(|d| d.source.is_rated());
        let source = said.as_ref().map(|d| d.source.name());
        let (nudge_ttl, max) = (self.nudge_ttl, self.max_waiting);
        let (text, routed) = self.watched.route(text, &self.outlets);
        let (outlet, unwatched) = match routed {
            Ok(o) => (o, None),
            Err(e) => (None, Some(e)),
        };
        let unknown = self.channels.as_ref().and_then(|c| c.check(&text.channel).err()).map(|e| e.to_string());
        let store = self.store.clone();
        let now = self.clock.now();
        let backoff = self.backoff;
        let conversations = self.conversations.clone();
        let journal = self.journal.clone();
        let sent = self.sent.clone();
        Box::pin(async move {
            if unwatched.is_none() && sent.reached(&text) {
                // Another copy of this nudge (for another target) already went here.
                return Ok(text.target());
            }
            let error = match (unwatched, &outlet, unknown) {
                (Some(waits), _, _) => waits,
                (None, None, Some(why)) => OutletError::Refused(why),
                (None, None, None) => OutletError::Transient(format!("no outlet for channel `{}` (yet)", text.channel)),
                (None, Some(o), _) => match o.deliver(&text).await {
                    Ok(()) => {
                        sent.note(&text);
                        record_said(&conversations, &said, outlet.as_ref(), &text, now);
                        return Ok(text.target());
                    }
                    Err(e) => e,
                },
            };
            let refused_by_outlet = outlet.is_some() && matches!(error, OutletError::Refused(_));
            if matches!(error, OutletError::Refused(_)) && !refused_by_outlet {
                return Err(PostError::Dropped(error.to_string()));
            }
            let entry = OutboxEntry {
                text,
                attempts: 1,
                last_error: error.to_string(),
                queued_at: now,
                next_attempt_at: now + backoff,
                lease: None,
                fire,
                said,
                expires_at: expires_at.or(rated.then(|| now + nudge_ttl)),
            };
            if refused_by_outlet {
                // Refused for good by the service (a 5xx from a mail server, say): kept as a
                // dead letter, where `raven outbox` shows it, not dropped unseen.
                let dead = entry.journal_event("dead_letter", Some(error.to_string()));
                let why = error.to_string();
                off_thread(move || store.refuse(entry, now, why))
                    .await
                    .map_err(|e| PostError::Dropped(format!("{error}; and the outbox failed: {e}")))?;
                journal.record(now, source, dead);
                return Err(PostError::Dropped(error.to_string()));
            }
            let queued = entry.journal_event("queued", Some(error.to_string()));
            off_thread(move || store.admit(entry, max, now))
                .await
                .map_err(|e| PostError::Dropped(format!("{error}; and the outbox failed: {e}")))?;
            journal.record(now, source, queued);
            Err(PostError::Queued(error.to_string()))
        })
    }
}

/// What waits in the outbox, and the dead letters: what a test of the engine reads back (a
/// person reads them with `raven outbox`, straight from the store).
#[cfg(test)]
pub struct OutboxSnapshot;

#[cfg(test)]
impl Request for OutboxSnapshot {
    type Reply = Result<Outbox, crate::store::StoreError>;
}

#[cfg(test)]
impl ServeAsync<OutboxSnapshot> for DeliveryHubService {
    fn serve_async(&mut self, _: OutboxSnapshot) -> LocalBoxFuture<'static, Result<Outbox, crate::store::StoreError>> {
        let store = self.store.clone();
        Box::pin(off_thread(move || store.snapshot()))
    }
}

/// How many messages wait, and how many dead letters are kept (the metrics' gauges).
pub struct OutboxLevels;

impl Request for OutboxLevels {
    type Reply = Result<super::outbox::Levels, crate::store::StoreError>;
}

impl ServeAsync<OutboxLevels> for DeliveryHubService {
    fn serve_async(
        &mut self,
        _: OutboxLevels,
    ) -> LocalBoxFuture<'static, Result<super::outbox::Levels, crate::store::StoreError>> {
        let store = self.store.clone();
        Box::pin(off_thread(move || store.levels()))
    }
}
