//! The one place where a proactive message becomes part of its conversation: once a
//! message reached `channel:chat_id`, its session gets an assistant-side line marked
//! proactive (with the nudge id and topic; no turn runs for it, spec §6) and the feedback
//! log gets its `dispatched` record (rated or not by its source). The DeliveryHub calls it
//! for everything it delivers with a [`Dispatch`], now or late from the outbox; the agent
//! calls it for an inject that rode its reply. A morning brief's items get a `dispatched`
//! record each (with the item's own text), so each can be rated or put off on its own.

use crate::feedback::{Dispatch, NudgeFeedbackTracker};
use crate::journal::Journal;
use crate::llm::provider::Role;
use crate::sessions::{SessionLine, SessionStore};
use chrono::{DateTime, Utc};
use std::rc::Rc;

#[derive(Clone)]
pub struct Conversations {
    sessions: SessionStore,
    tracker: Rc<NudgeFeedbackTracker>,
    journal: Journal,
}

impl Conversations {
    pub fn new(sessions: SessionStore, tracker: Rc<NudgeFeedbackTracker>) -> Self {
        Conversations { sessions, tracker, journal: Journal::off() }
    }

    /// Each delivery is also a line of the decision journal.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// Records that `content` reached `channel:chat_id`; `visible` says whether anyone could
    /// see it there (only such a message can later be `ignored`). Failures are logged: the
    /// message is out, and a missing line must not make it go out again.
    pub fn said(&self, d: &Dispatch, channel: &str, chat_id: &str, content: &str, visible: bool, at: DateTime<Utc>) {
        let line = SessionLine {
            proactive: true,
            nudge_id: Some(d.nudge_id.clone()),
            topic: Some(d.topic.clone()),
            source: Some(d.source),
            ..SessionLine::new(Role::Assistant, content, at)
        };
        if let Err(e) = self.sessions.append_line(channel, chat_id, &line) {
            tracing::warn!(nudge_id = %d.nudge_id, "proactive message not written to its session: {e}");
        }
        let session = format!("{channel}:{chat_id}");
        self.journal.record(at, Some(d.source.name()), d.delivered_event(session.clone()));
        // A brief's items first, each its own record, so a verdict or a "later" is about that
        // one; the brief's own last, so a bare `/later` is about the brief.
        for item in &d.items {
            if let Err(e) = self.tracker.record_item(d, item, Some(&session), visible, at) {
                tracing::warn!(nudge_id = %item.nudge_id, "dispatched record of a brief item not written: {e}");
            }
        }
        if let Err(e) = self.tracker.record_said(d, Some(&session), visible, content, at) {
            tracing::warn!(nudge_id = %d.nudge_id, "dispatched record not written: {e}");
        }
    }
}
