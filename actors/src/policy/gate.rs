//! NudgePolicy (spec §5): the one anti-spam gate every executor and task discovery pass.
//!
//! `check()` is pure: it reads the ledger, the learned feedback and the clock value it is
//! given, and writes nothing. `record_fired()` is the write half, called only after a
//! successful dispatch, so a failed dispatch charges no quota.
//!
//! The layers live by kind in `dnd`, `quotas`, `cooldowns` and `topics`; `record` is the write
//! half and `snapshot` what the Planner reads of the gate.

use super::ledger::{LedgerIndex, PolicyState};
use super::overrides::{tighten, PolicyOverrides};
use super::topic::topic_of;
use crate::config::PolicyConfig;
use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, PolicyLayer, Priority, Verdict};

/// One question to the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRequest<'a> {
    pub action: Action,
    /// `channel:chat_id`; `None` for an untargeted nudge (shares the key `*`).
    pub session_key: Option<&'a str>,
    /// The message, or the task for spawn_agent.
    pub content: &'a str,
    pub priority: Priority,
    /// An explicit topic tag; otherwise derived from the content.
    pub topic: Option<&'a str>,
    /// The user asked for it (a menu pick): only layers 1 (skip) and 10 (the same content
    /// twice within the dedup window) apply; quotas, cooldowns, quiet hours and
    /// do-not-disturb keep unsolicited messages apart, not answers.
    pub solicited: bool,
}

impl<'a> CheckRequest<'a> {
    /// How a cron fire enters the ledger: an untargeted low-priority nudge.
    pub fn cron(content: &'a str, topic: Option<&'a str>) -> Self {
        CheckRequest {
            action: Action::Nudge,
            session_key: None,
            content,
            priority: Priority::Low,
            topic,
            solicited: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct NudgePolicy {
    base: PolicyConfig,
    /// The user's preferences last handed over, kept to re-apply over a new base.
    overrides: PolicyOverrides,
    /// `base` after the user's (tighten-only) overrides.
    cfg: PolicyConfig,
    tz: Tz,
    state: PolicyState,
    index: LedgerIndex,
}

/// The outcome of one layer: pass, or deny with a reason.
// A `String` error: a layer's reason, which becomes the Verdict's reason a person reads.
type Layer = Result<(), String>;

/// Every layer's own answer, in order.
pub type Trace = Vec<(PolicyLayer, Layer)>;

impl NudgePolicy {
    pub fn new(cfg: PolicyConfig, tz: Tz) -> Self {
        NudgePolicy {
            base: cfg.clone(),
            overrides: PolicyOverrides::default(),
            cfg,
            tz,
            state: PolicyState::default(),
            index: LedgerIndex::default(),
        }
    }

    pub fn config(&self) -> &PolicyConfig {
        &self.cfg
    }

    pub fn state(&self) -> &PolicyState {
        &self.state
    }

    /// Hydrate: the state as read from the store.
    pub fn replace_state(&mut self, state: PolicyState) {
        self.index = LedgerIndex::build(&state.fires);
        self.state = state;
    }

    /// Re-applies user preferences on top of the configured base; returns the notes of
    /// every refused loosening.
    pub fn set_overrides(&mut self, o: &PolicyOverrides) -> Vec<String> {
        let (cfg, notes) = tighten(&self.base, o);
        (self.cfg, self.overrides) = (cfg, o.clone());
        notes
    }

    /// A new configured base (config.toml changed), with the user's preferences applied
    /// over it again; returns the notes of every refused loosening.
    pub fn set_base(&mut self, base: PolicyConfig) -> Vec<String> {
        self.base = base;
        let overrides = std::mem::take(&mut self.overrides);
        self.set_overrides(&overrides)
    }

    /// The spec's `check(action, session_key, content, priority)`, with the clock value.
    #[cfg(any(test, feature = "testkit"))]
    pub fn check(
        &self,
        action: Action,
        session_key: Option<&str>,
        content: &str,
        priority: Priority,
        now: DateTime<Utc>,
    ) -> Verdict {
        let req = CheckRequest { action, session_key, content, priority, topic: None, solicited: false };
        self.check_request(&req, now)
    }

    /// Runs the eleven layers in the order of the spec's table. A high-priority request
    /// passes a layer whose bypass column says yes; every other denial is final.
    pub fn check_request(&self, req: &CheckRequest<'_>, now: DateTime<Utc>) -> Verdict {
        self.evaluate(req, now, None)
    }

    /// The verdict plus every layer's own answer (all layers run, none short-circuits):
    /// what `raven policy explain` prints.
    pub fn explain(&self, req: &CheckRequest<'_>, now: DateTime<Utc>) -> (Verdict, Trace) {
        let mut trace = Vec::new();
        let verdict = self.evaluate(req, now, Some(&mut trace));
        (verdict, trace)
    }

    fn evaluate(&self, req: &CheckRequest<'_>, now: DateTime<Utc>, mut trace: Option<&mut Trace>) -> Verdict {
        let derived;
        let topic = match req.topic {
            Some(t) => t,
            None => {
                derived = topic_of(req.content);
                derived.as_str()
            }
        };
        let high = req.priority == Priority::High;
        let local = now.with_timezone(&self.tz);
        let spawn = req.action == Action::SpawnAgent;
        let fb = &self.state.feedback;
        let layers: [(PolicyLayer, &dyn Fn() -> Layer); 12] = [
            (PolicyLayer::Skip, &|| {
                if req.action == Action::Skip {
                    Err("action is skip".into())
                } else {
                    Ok(())
                }
            }),
            (PolicyLayer::QuietHours, &|| self.quiet_hours(local.time())),
            (PolicyLayer::DynamicDnd, &|| self.dynamic_dnd(local.hour())),
            (PolicyLayer::PersonaDnd, &|| self.persona_dnd(fb, now, local.time(), local.weekday())),
            (PolicyLayer::DayQuota, &|| self.day_quota(spawn, now)),
            (PolicyLayer::HourQuota, &|| self.hour_quota(spawn, now, local.weekday())),
            (PolicyLayer::SessionCooldown, &|| self.session_cooldown(req.session_key, now)),
            (PolicyLayer::DismissalCooldown, &|| self.dismissal_cooldown(fb, now)),
            (PolicyLayer::TopicRejectCooldown, &|| self.topic_reject(fb, topic, now)),
            (PolicyLayer::TopicAcceptance, &|| self.topic_acceptance(fb, topic)),
            (PolicyLayer::ContentDedup, &|| self.dedup(req.content, topic, now)),
            (PolicyLayer::TopicQuota, &|| self.topic_quota(topic, now)),
        ];
        let mut bypassed = Vec::new();
        let mut denial: Option<Verdict> = None;
        for (layer, run) in layers {
            let outcome = if req.solicited && !layer.applies_to_solicited() { Ok(()) } else { run() };
            if let Some(t) = trace.as_deref_mut() {
                t.push((layer, outcome.clone()));
            }
            let Err(reason) = outcome else { continue };
            if denial.is_some() {
                continue; // only tracing from here on
            }
            // The user's own `/snooze` is not bypassed, whatever the priority.
            let bypass = high
                && layer.high_priority_may_bypass()
                && !(layer == PolicyLayer::QuietHours && self.quiet_bypass_withdrawn().is_some())
                && !(layer == PolicyLayer::PersonaDnd && fb.snoozed(now).is_some());
            let spent = bypass.then(|| self.bypass_spent(layer, topic, now)).flatten();
            if bypass && spent.is_none() {
                bypassed.push(layer);
                continue;
            }
            let reason = match spent {
                Some(why) => format!("{reason}; {why}"),
                None => reason,
            };
            let reason = match self.quiet_bypass_withdrawn() {
                Some(why) if high && layer == PolicyLayer::QuietHours => {
                    format!("{reason}; high-priority bypass withdrawn: {why}")
                }
                _ => reason,
            };
            denial = Some(Verdict::deny(layer, reason));
            if trace.is_none() {
                break;
            }
        }
        denial.unwrap_or_else(|| Verdict::allow(bypassed))
    }

    /// A time in a reason, as the user reads it: local, to the minute.
    fn shown(&self, t: DateTime<Utc>) -> String {
        crate::time::local(t, self.tz)
    }
}

mod bypass;
mod cooldowns;
mod dnd;
mod quotas;
mod record;
mod snapshot;
mod topics;

pub use record::{apply_tuning, fire_record};
