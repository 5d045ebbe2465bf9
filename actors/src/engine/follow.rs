//! Follows config.toml while the engine runs. Each change is read again ([`LiveConfig`]):
//! the parts that read a live key at their next use (cron targets, default targets, the
//! tick interval) see it there; the policy is handed its new base, with the user's
//! preferences applied over it again; the outlets this process hosts itself are built anew.
//! Each reload is a `config` line of the decision journal and a log line, naming what needs
//! a restart; a file that does not parse changes nothing and says why.

use super::{configured_outlets, Engine};
use crate::clock::SharedClock;
use crate::config::{LiveConfig, Reload};
use crate::data_dir::DataDir;
use crate::delivery::hub::{DeliveryHubService, RegisterOutlet};
use crate::journal::{ConfigReload, Event, Journal};
use crate::policy::{NudgePolicyService, SetBase};
use crate::supervise::Handle;
use crate::watch::{watch_edited_file, SETTLE};
use std::path::{Path, PathBuf};

/// What a reload reaches.
struct Follower {
    live: LiveConfig,
    path: PathBuf,
    dir: DataDir,
    policy: Handle<NudgePolicyService>,
    hub: Handle<DeliveryHubService>,
    /// The outside-facing channels this process hosts itself (not the gateway, not a
    /// caller's override).
    own_channels: Vec<String>,
    journal: Journal,
    clock: SharedClock,
}

impl Engine {
    /// Watches `path` (the data dir's config.toml) for as long as the engine lives.
    pub fn follow_config(&mut self, dir: &DataDir, path: &Path) {
        let follower = Follower {
            live: self.config.clone(),
            path: path.to_owned(),
            dir: dir.clone(),
            policy: self.policy.clone(),
            hub: self.hub.clone(),
            own_channels: self.own_channels.clone(),
            journal: self.journal.clone(),
            clock: self.clock.clone(),
        };
        match watch_edited_file(path, SETTLE, move || follower.on_change()) {
            Ok(w) => self._watches.push(w),
            Err(e) => tracing::warn!("{} is not watched, a change needs a restart: {e}", path.display()),
        }
    }
}

impl Follower {
    fn on_change(&self) {
        match self.live.reload(&self.path) {
            Ok(r) if r.is_empty() => {}
            Ok(r) => {
                self.apply(&r);
                self.tell(ConfigReload { applied: r.applied, needs_restart: r.needs_restart, error: None });
            }
            Err(e) => self.tell(ConfigReload { error: Some(e.to_string()), ..Default::default() }),
        }
    }

    /// The parts that hold a copy of what changed get the new one.
    fn apply(&self, r: &Reload) {
        let config = self.live.get();
        if r.touches("policy") {
            self.policy.do_send(SetBase(config.policy.clone()));
        }
        if r.touches("delivery") && !self.own_channels.is_empty() {
            match configured_outlets(&self.dir, &config, &Default::default()) {
                Ok(outlets) => outlets
                    .into_iter()
                    .filter(|o| self.own_channels.iter().any(|c| c == o.channel()))
                    .for_each(|o| self.hub.do_send(RegisterOutlet(o))),
                Err(e) => tracing::warn!("the outlets keep their running settings: {e}"),
            }
        }
    }

    fn tell(&self, c: ConfigReload) {
        match &c.error {
            Some(e) => tracing::warn!("config.toml not taken, the running config stays: {e}"),
            None if c.needs_restart.is_empty() => tracing::info!("config.toml: applied {}", c.applied.join(", ")),
            None if c.applied.is_empty() => {
                tracing::warn!("config.toml: needs a restart to take effect: {}", c.needs_restart.join(", "))
            }
            None => tracing::warn!(
                "config.toml: applied {}; needs a restart to take effect: {}",
                c.applied.join(", "),
                c.needs_restart.join(", ")
            ),
        }
        self.journal.record(self.clock.now(), Some("config"), Event::Config(c));
    }
}
