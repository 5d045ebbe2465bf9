//! NudgePolicy (spec §5): the one anti-spam gate every executor and task discovery pass.
//!
//! `check()` is pure: it reads the ledger, the learned feedback and the clock value it is
//! given, and writes nothing. `record_fired()` is the write half, called only after a
//! successful dispatch, so a failed dispatch charges no quota.

use super::adaptive::{self, Tuning};
use super::ledger::{FireKind, FireRecord, LedgerIndex, PolicyState};
use super::overrides::{tighten, PolicyOverrides};
use super::topic::{content_hash, topic_of};
use crate::config::PolicyConfig;
use crate::feedback::FeedbackSummary;
use chrono::{DateTime, Datelike, Duration, NaiveTime, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use raven_proto::{Action, PolicyLayer, PolicySnapshot, Priority, TopicFireHistory, Verdict};
use std::collections::BTreeMap;

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

    fn quiet_hours(&self, t: NaiveTime) -> Layer {
        match std::iter::once(&self.cfg.quiet_hours).chain(&self.cfg.extra_quiet_hours).find(|q| q.contains(t)) {
            Some(q) => Err(format!("quiet hours {q} ({})", self.tz)),
            None => Ok(()),
        }
    }

    /// The bypass of quiet hours is itself withdrawn while the user keeps rejecting
    /// high-priority nudges.
    fn quiet_bypass_withdrawn(&self) -> Option<String> {
        let high = self.state.feedback.high_priority;
        let rate = high.acceptance()?;
        (high.samples() >= self.cfg.quiet_bypass_min_samples && rate < self.cfg.quiet_bypass_min_acceptance).then(
            || {
                format!(
                    "high-priority acceptance {:.0}% over {} verdicts is below {:.0}%",
                    rate * 100.0,
                    high.samples(),
                    self.cfg.quiet_bypass_min_acceptance * 100.0
                )
            },
        )
    }

    fn dynamic_dnd(&self, hour: u32) -> Layer {
        let r = self.state.feedback.hour(hour);
        match r.acceptance() {
            Some(a)
                if r.dismissed >= self.cfg.dynamic_dnd_min_dismissals && a <= self.cfg.dynamic_dnd_max_acceptance =>
            {
                Err(format!(
                    "learned do-not-disturb at {hour:02}:00: {} of {} nudges dismissed",
                    r.dismissed,
                    r.samples()
                ))
            }
            _ => Ok(()),
        }
    }

    /// The persona's do-not-disturb windows, and the user's `/snooze` (a temporary one).
    fn persona_dnd(&self, fb: &FeedbackSummary, now: DateTime<Utc>, t: NaiveTime, day: Weekday) -> Layer {
        if let Some(until) = fb.snoozed(now) {
            return Err(format!("snoozed by the user until {} (/snooze off ends it)", self.shown(until)));
        }
        match self.cfg.dnd_windows.iter().find(|w| {
            (w.weekdays.is_empty() || w.weekdays.contains(&day))
                && crate::config::Window::new(w.start, w.end).contains(t)
        }) {
            Some(w) => Err(format!("do-not-disturb window `{}` {}-{}", w.name, w.start, w.end)),
            None => Ok(()),
        }
    }

    /// Start of the user's local calendar day, in UTC.
    fn local_midnight(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        crate::time::local_midnight(now, self.tz)
    }

    fn day_limit(&self, spawn: bool) -> u32 {
        if spawn {
            self.cfg.spawn_max_per_day
        } else {
            self.cfg.max_per_day
        }
    }

    fn sent_today(&self, spawn: bool, now: DateTime<Utc>) -> u32 {
        let times = if spawn { &self.index.spawns } else { &self.index.nudges };
        times.count_since(self.local_midnight(now))
    }

    fn day_quota(&self, spawn: bool, now: DateTime<Utc>) -> Layer {
        let (sent, limit) = (self.sent_today(spawn, now), self.day_limit(spawn));
        if sent >= limit {
            Err(format!("{sent} of {limit} {} sent today", if spawn { "spawns" } else { "nudges" }))
        } else {
            Ok(())
        }
    }

    fn weekend_factor(&self, day: Weekday) -> f64 {
        if matches!(day, Weekday::Sat | Weekday::Sun) {
            self.cfg.adaptive.weekend_factor
        } else {
            1.0
        }
    }

    /// The hour quota after the adaptive and weekend multipliers; never below one (the
    /// day quota is the hard cap).
    pub fn hour_limit(&self, spawn: bool, day: Weekday) -> u32 {
        let base = if spawn { self.cfg.spawn_max_per_hour } else { self.cfg.max_per_hour };
        if spawn {
            return base;
        }
        let scaled = f64::from(base) * self.state.multiplier * self.weekend_factor(day);
        (scaled.floor() as u32).max(1)
    }

    fn sent_this_hour(&self, spawn: bool, now: DateTime<Utc>) -> u32 {
        let times = if spawn { &self.index.spawns } else { &self.index.nudges };
        times.count_within(Duration::hours(1), now)
    }

    fn hour_quota(&self, spawn: bool, now: DateTime<Utc>, day: Weekday) -> Layer {
        let (sent, limit) = (self.sent_this_hour(spawn, now), self.hour_limit(spawn, day));
        if sent >= limit {
            Err(format!(
                "{sent} of {limit} in the last hour (multiplier {:.2}, weekend factor {:.2})",
                self.state.multiplier,
                self.weekend_factor(day)
            ))
        } else {
            Ok(())
        }
    }

    /// A time in a reason, as the user reads it: local, to the minute.
    fn shown(&self, t: DateTime<Utc>) -> String {
        crate::time::local(t, self.tz)
    }

    fn session_cooldown(&self, session: Option<&str>, now: DateTime<Utc>) -> Layer {
        let key = session.unwrap_or("*");
        let cooldown = Duration::minutes(self.cfg.session_cooldown_minutes);
        match self.index.last_by_session.get(key) {
            Some(&last) if now < last + cooldown => Err(format!(
                "session {key} was nudged at {}; cooldown {}m",
                self.shown(last),
                self.cfg.session_cooldown_minutes
            )),
            _ => Ok(()),
        }
    }

    fn dismissal_cooldown(&self, fb: &FeedbackSummary, now: DateTime<Utc>) -> Layer {
        let cooldown = Duration::minutes(self.cfg.dismissal_cooldown_minutes);
        match fb.last_dismissal {
            Some(last) if now < last + cooldown => Err(format!(
                "the user dismissed a nudge at {}; cooldown {}m",
                self.shown(last),
                self.cfg.dismissal_cooldown_minutes
            )),
            _ => Ok(()),
        }
    }

    /// A topic the user muted (`/stop`), or rejected enough that it cools down. The cooldown
    /// starts at the last reject and lasts by the weight as it was then.
    fn topic_reject(&self, fb: &FeedbackSummary, topic: &str, now: DateTime<Utc>) -> Layer {
        if let Some(until) = fb.muted_until(topic, now) {
            return Err(format!(
                "topic `{topic}` muted by the user until {} (/ok {topic} unmutes it)",
                self.shown(until)
            ));
        }
        let Some(t) = fb.by_topic.get(topic) else {
            return Ok(());
        };
        let weight = t.weight_at_last_reject.max(t.reject_weight);
        let (Some(last), true) = (t.last_reject, weight >= self.cfg.topic_reject_weight_threshold) else {
            return Ok(());
        };
        let hours =
            (self.cfg.topic_reject_cooldown_hours as f64 * weight).min(self.cfg.topic_reject_max_cooldown_hours as f64);
        let until = last + Duration::minutes((hours * 60.0) as i64);
        if now < until {
            Err(format!("topic `{topic}` was rejected (weight {:.2}); cooled down until {}", weight, self.shown(until)))
        } else {
            Ok(())
        }
    }

    fn topic_acceptance(&self, fb: &FeedbackSummary, topic: &str) -> Layer {
        let Some(t) = fb.by_topic.get(topic) else {
            return Ok(());
        };
        match t.rate.acceptance() {
            Some(a) if t.rate.samples() >= self.cfg.topic_min_samples && a < self.cfg.topic_min_acceptance => {
                Err(format!("topic `{topic}` acceptance {:.0}% over {} verdicts", a * 100.0, t.rate.samples()))
            }
            _ => Ok(()),
        }
    }

    fn dedup(&self, content: &str, topic: &str, now: DateTime<Utc>) -> Layer {
        let since = now - Duration::minutes(self.cfg.dedup_window_minutes);
        if let Some(&at) = self.index.last_by_content.get(&content_hash(content)) {
            if at > since {
                return Err(format!("the same content was sent at {}", self.shown(at)));
            }
        }
        match self.index.last_cron_by_topic.get(topic) {
            Some(&at) if at > since => Err(format!("a cron job fired on topic `{topic}` at {}", self.shown(at))),
            _ => Ok(()),
        }
    }

    fn topic_quota(&self, topic: &str, now: DateTime<Utc>) -> Layer {
        let Some(times) = self.index.by_topic.get(topic) else {
            return Ok(());
        };
        let stack = [
            ("hour", Duration::hours(1), self.cfg.topic_max_per_hour),
            ("day", Duration::days(1), self.cfg.topic_max_per_day),
            ("week", Duration::weeks(1), self.cfg.topic_max_per_week),
        ];
        for (name, window, limit) in stack {
            let n = times.count_within(window, now);
            if n >= limit {
                return Err(format!("topic `{topic}`: {n} of {limit} this {name}"));
            }
        }
        Ok(())
    }

    /// The write half of the read/write split: call after a successful dispatch.
    pub fn record_fired(
        &mut self,
        action: Action,
        session_key: Option<&str>,
        content: &str,
        priority: Priority,
        topic: Option<&str>,
        now: DateTime<Utc>,
    ) -> FireRecord {
        let req = CheckRequest { action, session_key, content, priority, topic, solicited: false };
        self.record(FireKind::of(action), &req, now)
    }

    /// A cron fire's topic tag: suppresses a Sentinel nudge on the topic within the dedup
    /// window; charges no Sentinel quota.
    pub fn record_cron_fire(&mut self, topic: Option<&str>, content: &str, now: DateTime<Utc>) -> FireRecord {
        self.record(FireKind::Cron, &CheckRequest::cron(content, topic), now)
    }

    fn record(&mut self, kind: FireKind, req: &CheckRequest<'_>, now: DateTime<Utc>) -> FireRecord {
        let fire = fire_record(kind, req, now);
        self.push(fire.clone(), now);
        fire
    }

    fn push(&mut self, fire: FireRecord, now: DateTime<Utc>) {
        let before = self.state.fires.first().map(|f| f.at);
        self.state.push_fire(fire.clone(), now);
        if self.state.fires.first().map(|f| f.at) != before {
            // Old fires were pruned: rebuild rather than un-index.
            self.index = LedgerIndex::build(&self.state.fires);
        } else {
            self.index.add(&fire);
        }
    }

    /// `apply_adaptive_tuning`: adopts the latest feedback and moves the multiplier.
    pub fn apply_adaptive_tuning(&mut self, summary: FeedbackSummary) -> Tuning {
        apply_tuning(&mut self.state, summary, &self.cfg)
    }

    /// What the Planner sees of the gate.
    pub fn snapshot_state(&self, now: DateTime<Utc>) -> PolicySnapshot {
        let local = now.with_timezone(&self.tz);
        let day = local.weekday();
        let remaining = |limit: u32, sent: u32| limit.saturating_sub(sent);
        PolicySnapshot {
            in_quiet_hours: self.quiet_hours(local.time()).is_err(),
            quiet_hours: {
                let all = std::iter::once(&self.cfg.quiet_hours).chain(&self.cfg.extra_quiet_hours);
                format!("{} ({})", all.map(ToString::to_string).collect::<Vec<_>>().join(", "), self.tz)
            },
            remaining_today: remaining(self.cfg.max_per_day, self.sent_today(false, now)),
            remaining_this_hour: remaining(self.hour_limit(false, day), self.sent_this_hour(false, now)),
            spawn_remaining_today: remaining(self.cfg.spawn_max_per_day, self.sent_today(true, now)),
            adaptive_multiplier: self.state.multiplier,
            weekend_factor: self.weekend_factor(day),
            dismissal_cooldown_until: self
                .state
                .feedback
                .last_dismissal
                .map(|d| d + Duration::minutes(self.cfg.dismissal_cooldown_minutes))
                .filter(|until| *until > now),
        }
    }

    /// Recent fires per topic with the user's reactions: the Planner's `fire_history`,
    /// straight from memory (no disk, no LLM).
    pub fn fire_history(&self, now: DateTime<Utc>) -> BTreeMap<String, TopicFireHistory> {
        let since = now - Duration::weeks(1);
        let mut out: BTreeMap<String, TopicFireHistory> = BTreeMap::new();
        for f in self.state.fires.iter().filter(|f| f.at >= since) {
            let h = out.entry(f.topic.clone()).or_default();
            h.fired += 1;
            h.last_fired = h.last_fired.max(Some(f.at));
        }
        for (topic, h) in out.iter_mut() {
            if let Some(t) = self.state.feedback.by_topic.get(topic) {
                h.accepted = t.rate.accepted;
                h.dismissed = t.rate.dismissed;
            }
        }
        out
    }
}

/// The ledger entry of one fire; the topic is the explicit tag or derived from the content.
pub fn fire_record(kind: FireKind, req: &CheckRequest<'_>, at: DateTime<Utc>) -> FireRecord {
    FireRecord {
        at,
        kind,
        action: req.action,
        session: req.session_key.map(str::to_owned),
        topic: req.topic.map(str::to_owned).unwrap_or_else(|| topic_of(req.content)),
        content_hash: content_hash(req.content),
        priority: req.priority,
    }
}

/// The tuning step on a state, shared by the in-memory policy and the store's
/// read-modify-write (so a tuning never overwrites a peer's fires).
pub fn apply_tuning(state: &mut PolicyState, summary: FeedbackSummary, cfg: &PolicyConfig) -> Tuning {
    let tuning = adaptive::tune(&mut state.multiplier, summary.overall, &cfg.adaptive);
    state.feedback = summary;
    tuning
}

mod bypass;
