//! The engine's timers: the heartbeat, and the cron timer with the jobs.json watch that ends
//! its sleep.

use super::{Delivery, Hub, Policy, Wiring};
use crate::cron::claims::{ChannelFilter, Claimer};
use crate::cron::{fire::CronTurns, service::CronService};
use crate::executor::dispatcher::DefaultTargets;
use crate::heartbeat::{HeartbeatDeps, HeartbeatService};
use crate::llm::provider::SharedProvider;
use crate::sessions::SessionStore;
use crate::spine::Scheduler;
use crate::supervise::{start, Handle};
use crate::watch::{watch_file, FileWatch};
use std::{rc::Rc, sync::Arc};

impl Wiring<'_> {
    pub(in crate::engine) fn heartbeat(
        &self,
        provider: &SharedProvider,
        scheduler: &Scheduler,
        hub: &Hub,
        policy: &Policy,
    ) -> Handle<HeartbeatService> {
        let heartbeat = HeartbeatService::new(HeartbeatDeps {
            provider: provider.clone(),
            heartbeat_md: self.dir.heartbeat(),
            scheduler: scheduler.clone(),
            hub: hub.clone(),
            targets: DefaultTargets::following(self.live.clone()),
            clock: self.clock.clone(),
            cfg: self.config.heartbeat.clone(),
            wake: self.wake.clone(),
            policy: Some(policy.clone()),
            journal: self.journal.clone(),
        });
        start(heartbeat, &self.metrics, self.restart("Heartbeat"))
    }

    /// The cron timer (`None` with `cron.enabled = false`), firing the jobs of `channels`.
    pub(in crate::engine) fn cron(
        &self,
        scheduler: &Scheduler,
        delivery: &Delivery,
        policy: &Policy,
        channels: Option<Vec<String>>,
    ) -> Option<Handle<CronService>> {
        let (config, clock) = (&self.config.cron, &self.clock);
        config.enabled.then(|| {
            let turns = CronTurns {
                scheduler: scheduler.clone(),
                hub: delivery.hub.clone(),
                policy: policy.clone(),
                sessions: SessionStore::new(self.dir.sessions()),
                config: self.live.clone(),
                clock: clock.clone(),
                // A cron completion is a reason to look at HEARTBEAT.md early.
                on_fired: Some({
                    let (wake, clock) = (self.wake.clone(), clock.clone());
                    Rc::new(move |id: &str| wake.request_wake_now(format!("cron:{id} done"), clock.now()))
                }),
                journal: self.journal.clone(),
            };
            let claimer = Claimer {
                pid: std::process::id(),
                ttl: chrono::Duration::seconds(config.claim_ttl_s as i64),
                filter: ChannelFilter(channels),
                strike_limit: config.strike_limit.max(1),
                strike_min_gap: chrono::Duration::seconds(config.strike_min_gap_s as i64),
            };
            let service = CronService::new(delivery.jobs.clone(), claimer, Rc::new(turns), clock.clone());
            start(service, &self.metrics, self.restart("Cron"))
        })
    }

    /// Rings `ring` on each edit of jobs.json, ending the cron timer's sleep.
    pub(in crate::engine) fn watch_jobs(&self, ring: Arc<tokio::sync::Notify>) -> Option<FileWatch> {
        watch_file(&self.dir.jobs(), move || ring.notify_one())
            .inspect_err(|e| {
                tracing::warn!("jobs.json is not watched, a peer's edit is seen within cron.max_sleep_s: {e}")
            })
            .ok()
    }
}
