//! What carries out a decision: the injector, the defer heap and the dispatcher, the
//! proactive spawn over the scheduler, and the router the Sentinel hands its decisions to.

use super::{Hub, Policy, Wiring};
use crate::agent::AgentSubagent;
use crate::engine::StartError;
use crate::engine::WakingSubagent;
use crate::executor::defer::{DeferManager, DeferService};
use crate::executor::dispatcher::DefaultTargets;
use crate::executor::injector::{self, InjectorService, NudgeInjector};
use crate::executor::{dispatcher::NudgeDispatcher, spawn::ProactiveSpawn, Executors};
use crate::sentinel::Router;
use crate::spine::Scheduler;
use crate::store::owners::Owner;
use crate::supervise::{start, Handle};
use std::rc::Rc;

/// What carries out a decision: the injector, the defer heap and the dispatcher.
pub(in crate::engine) struct Execution {
    pub(in crate::engine) injector: Handle<InjectorService>,
    pub(in crate::engine) defer: Handle<DeferService>,
    pub(super) dispatcher: NudgeDispatcher,
}

impl Wiring<'_> {
    pub(in crate::engine) fn executors(&self, policy: &Policy, hub: &Hub) -> Result<Execution, StartError> {
        let (x, clock) = (&self.config.executor, self.clock.clone());
        let ttl = chrono::Duration::minutes(x.inject_ttl_minutes);
        let queues = NudgeInjector::new(injector::queues_in(self.state(Owner::Injector)?), ttl, x.inject_cap);
        let injector = InjectorService::new(queues, policy.clone(), clock.clone());
        let injector = start(injector, &self.metrics, self.restart("NudgeInjector"));
        let heap = DeferManager::in_data_dir(self.dir, x)?;
        let defer = start(DeferService::new(heap, clock), &self.metrics, self.restart("DeferManager"));
        let dispatcher = NudgeDispatcher::new(hub.clone(), DefaultTargets::following(self.live.clone()));
        Ok(Execution { injector, defer, dispatcher })
    }

    pub(in crate::engine) fn spawn(&self, policy: &Policy, scheduler: &Scheduler, x: &Execution) -> ProactiveSpawn {
        let clock = self.clock.clone();
        let inner = AgentSubagent::new(scheduler.clone(), clock.clone(), self.dir.sessions());
        let subagent = WakingSubagent { inner, wake: self.wake.clone(), clock };
        let timeout = std::time::Duration::from_secs(self.config.agent.subagent_timeout_s);
        ProactiveSpawn::new(policy.clone(), Rc::new(subagent), x.dispatcher.clone(), timeout)
    }

    /// The given router, or the executors.
    pub(in crate::engine) fn router(
        &self,
        given: Option<Rc<dyn Router>>,
        x: &Execution,
        spawn: ProactiveSpawn,
    ) -> Rc<dyn Router> {
        match given {
            Some(r) => r,
            None => Rc::new(Executors {
                dispatcher: x.dispatcher.clone(),
                injector: x.injector.clone(),
                defer: x.defer.clone(),
                spawn,
            }),
        }
    }
}
