//! The delivery side of the engine: the hub with its outlets (the configured ones, the
//! overrides, the gateway's), and the feedback tracker, jobs store and conversations every
//! user of feedback.jsonl and jobs.json shares.

use super::{Hub, Policy, Wiring};
use crate::cron::store::JobsStore;
use crate::delivery::hub::{DeliveryHubService, RegisterOutlet};
use crate::delivery::outbox::SqliteOutbox;
use crate::delivery::remote::{GatewayLink, RemoteOutlet};
use crate::delivery::{conversation::Conversations, outlets::Outlet, targets::Channels};
use crate::engine::configured_outlets;
use crate::engine::StartError;
use crate::feedback::NudgeFeedbackTracker;
use crate::sessions::SessionStore;
use crate::store::owners::Owner;
use crate::supervise::start;
use std::{rc::Rc, sync::Arc, time::Duration};

/// What delivers: the hub with its outlets, and what shares feedback.jsonl and jobs.json.
pub(in crate::engine) struct Delivery {
    pub(in crate::engine) tracker: Rc<NudgeFeedbackTracker>,
    pub(super) jobs: JobsStore,
    pub(super) conversations: Conversations,
    pub(in crate::engine) hub: Hub,
    pub(in crate::engine) events: crate::ipc::EventBus,
    /// The gateway's end of the outlets it hosts (`None` when it hosts none).
    pub(in crate::engine) gateway: Option<GatewayLink>,
}

impl Wiring<'_> {
    /// The hub, its outlets (the configured ones, the overrides, the gateway's), and the
    /// feedback tracker and jobs store every user shares.
    pub(in crate::engine) fn delivery(
        &self,
        policy: &Policy,
        outlets: Vec<Arc<dyn Outlet>>,
        remote_channels: &[String],
    ) -> Result<Delivery, StartError> {
        let (dir, config, d) = (self.dir, self.config, &self.config.delivery);
        let backoff = chrono::Duration::seconds(d.outbox_backoff_s);
        // One of each per process: every user of feedback.jsonl and jobs.json shares it (a
        // JobsStore's clones share its cache).
        let journal = self.journal.clone();
        let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), self.tz);
        let tracker = Rc::new(tracker.with_journal(journal.clone()));
        let jobs = JobsStore::new(dir.jobs());
        let sessions = SessionStore::new(dir.sessions());
        let conversations = Conversations::new(sessions, tracker.clone()).with_journal(journal.clone());
        let outbox = Arc::new(SqliteOutbox::open(self.database()?, &Owner::Outbox.path(dir))?);
        let hub = DeliveryHubService::new(outbox, self.clock.clone(), backoff, Some(policy.clone()))
            .with_conversations(conversations.clone())
            .with_channels(Channels::of(config))
            .with_watched(crate::delivery::watched::Watched::of(config))
            .with_limits(chrono::Duration::hours(d.outbox_ttl_nudge_h), d.outbox_max)
            .with_journal(journal);
        let hub = start(hub, &self.metrics, self.restart("DeliveryHub"));
        let events = crate::ipc::EventBus::default();
        for outlet in configured_outlets(dir, config, &events)?.into_iter().chain(outlets) {
            hub.do_send(RegisterOutlet(outlet));
        }
        let gateway = GatewayLink::default();
        let timeout = Duration::from_secs(d.webhook_timeout_s * (d.webhook_attempts as u64 + 1) + 5);
        for channel in remote_channels {
            let remote = RemoteOutlet { channel: channel.clone(), link: gateway.clone(), timeout };
            hub.do_send(RegisterOutlet(Arc::new(remote)));
        }
        let gateway = (!remote_channels.is_empty()).then_some(gateway);
        Ok(Delivery { tracker, jobs, conversations, hub, events, gateway })
    }
}
