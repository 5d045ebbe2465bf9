//! What the gate needs to know of the user's reactions, computed from the lifecycle log
//! and handed to the NudgePolicy (persisted with it, so every process gates alike).

use super::record::{FeedbackRecord, Lifecycle};
use crate::config::FeedbackConfig;
use chrono::{DateTime, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::Priority;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The reason of a neutral verdict that says the item came too late (`/earlier`).
pub const EARLIER: &str = "earlier";

/// Accepted and dismissed verdicts; neutral ones count in neither.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rate {
    pub accepted: u32,
    pub dismissed: u32,
}

impl Rate {
    pub fn samples(&self) -> u32 {
        self.accepted + self.dismissed
    }

    /// `None` without samples: no data is not a zero rate.
    pub fn acceptance(&self) -> Option<f64> {
        let n = self.samples();
        (n > 0).then(|| f64::from(self.accepted) / f64::from(n))
    }

    fn bump(&mut self, accepted: bool) {
        if accepted {
            self.accepted += 1
        } else {
            self.dismissed += 1
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TopicFeedback {
    pub rate: Rate,
    /// Decayed sum of reject weights, as of now (a hard reject weighs more than a dismissal,
    /// an ignored message less).
    pub reject_weight: f64,
    /// The same sum as of the last reject: what the layer-8 cooldown that starts then is
    /// measured by, so a single "stop" is not decayed below the threshold a tick later.
    #[serde(default)]
    pub weight_at_last_reject: f64,
    pub last_reject: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FeedbackSummary {
    pub overall: Rate,
    pub high_priority: Rate,
    pub by_topic: HashMap<String, TopicFeedback>,
    /// By the local hour of day the nudge was dispatched (0–23); explicit verdicts only.
    pub by_hour: Vec<Rate>,
    /// The last explicit dismissal (an `ignored` is not one).
    pub last_dismissal: Option<DateTime<Utc>>,
    /// Topics muted by `/stop`, with the end of the mute.
    #[serde(default)]
    pub muted: BTreeMap<String, DateTime<Utc>>,
    /// `/snooze`: nothing proactive but cron until then.
    #[serde(default)]
    pub snoozed_until: Option<DateTime<Utc>>,
    /// Dismissals of brief items told ahead by their kind's lead, by kind (`payment`).
    #[serde(default)]
    pub dismissed_kinds: BTreeMap<String, u32>,
    /// Items of a kind the user said came too late (`/earlier`), by kind.
    #[serde(default)]
    pub earlier_kinds: BTreeMap<String, u32>,
}

impl FeedbackSummary {
    pub fn hour(&self, h: u32) -> Rate {
        self.by_hour.get(h as usize).copied().unwrap_or_default()
    }

    /// The end of the mute on `topic`, when one holds at `now`.
    pub fn muted_until(&self, topic: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.muted.get(topic).copied().filter(|until| *until > now)
    }

    pub fn snoozed(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.snoozed_until.filter(|until| *until > now)
    }
}

/// The rated verdict of each message: its latest explicit verdict, else its `ignored`.
fn verdicts(records: &[FeedbackRecord], since: DateTime<Utc>) -> HashMap<&str, &FeedbackRecord> {
    let mut out: HashMap<&str, &FeedbackRecord> = HashMap::new();
    let rank = |r: &FeedbackRecord| (r.event.is_verdict(), r.at);
    for r in records.iter().filter(|r| (r.event.is_verdict() || r.event == Lifecycle::Ignored) && r.at >= since) {
        match out.get(r.nudge_id.as_str()) {
            Some(prev) if rank(prev) > rank(r) => {}
            _ => {
                out.insert(&r.nudge_id, r);
            }
        }
    }
    out
}

/// The pure part of [`super::NudgeFeedbackTracker::summary`].
pub fn summarize(records: &[FeedbackRecord], now: DateTime<Utc>, cfg: &FeedbackConfig, tz: Tz) -> FeedbackSummary {
    let since = now - chrono::Duration::days(cfg.window_days);
    let mut dispatched: HashMap<&str, &FeedbackRecord> = HashMap::new();
    for r in records.iter().filter(|r| r.event == Lifecycle::Dispatched) {
        dispatched.entry(r.nudge_id.as_str()).or_insert(r);
    }
    let mut s = FeedbackSummary { by_hour: vec![Rate::default(); 24], ..Default::default() };
    let mut rejects: HashMap<String, Vec<(DateTime<Utc>, f64)>> = HashMap::new();
    for (id, v) in verdicts(records, since) {
        let d = dispatched.get(id);
        if !d.map_or(v.source, |d| d.source).is_rated() || !v.source.is_rated() {
            continue;
        }
        if v.event == Lifecycle::Neutral && v.reason.as_deref() == Some(EARLIER) {
            if let Some(kind) = d.and_then(|d| d.kind.clone()) {
                *s.earlier_kinds.entry(kind).or_default() += 1;
            }
        }
        let ignored = v.event == Lifecycle::Ignored;
        let accepted = match v.event {
            Lifecycle::Accepted => true,
            Lifecycle::Dismissed | Lifecycle::Ignored => false,
            _ => continue,
        };
        if let Some(kind) = d.and_then(|d| d.kind.clone()).filter(|_| v.event == Lifecycle::Dismissed) {
            *s.dismissed_kinds.entry(kind).or_default() += 1;
        }
        let topic = v.topic.clone().or_else(|| d.and_then(|d| d.topic.clone()));
        let priority = v.priority.or_else(|| d.and_then(|d| d.priority));
        s.overall.bump(accepted);
        if priority == Some(Priority::High) {
            s.high_priority.bump(accepted);
        }
        if !ignored {
            let sent_at = d.map(|d| d.at).unwrap_or(v.at);
            s.by_hour[sent_at.with_timezone(&tz).hour() as usize].bump(accepted);
            if !accepted {
                s.last_dismissal = s.last_dismissal.max(Some(v.at));
            }
        }
        if let Some(topic) = topic {
            s.by_topic.entry(topic.clone()).or_default().rate.bump(accepted);
            if !accepted {
                let weight = match (ignored, v.hard) {
                    (true, _) => cfg.ignore_weight,
                    (false, true) => cfg.hard_reject_weight,
                    (false, false) => cfg.dismiss_weight,
                };
                rejects.entry(topic).or_default().push((v.at, weight));
            }
        }
    }
    let half_life_s = cfg.reject_half_life_days * 86_400.0;
    let decayed = |list: &[(DateTime<Utc>, f64)], at: DateTime<Utc>| -> f64 {
        list.iter().map(|(t, w)| w * 0.5f64.powf((at - *t).num_seconds().max(0) as f64 / half_life_s)).sum()
    };
    for (topic, list) in rejects {
        let last = list.iter().map(|(t, _)| *t).max();
        let t = s.by_topic.entry(topic).or_default();
        t.reject_weight = decayed(&list, now);
        t.weight_at_last_reject = last.map_or(0.0, |last| decayed(&list, last));
        t.last_reject = last;
    }
    apply_mutes_and_snooze(records, now, &mut s);
    s
}

/// The latest mute or unmute of each topic, and the latest snooze, as they hold at `now`.
fn apply_mutes_and_snooze(records: &[FeedbackRecord], now: DateTime<Utc>, s: &mut FeedbackSummary) {
    let mut latest: BTreeMap<&str, &FeedbackRecord> = BTreeMap::new();
    let mut snooze: Option<&FeedbackRecord> = None;
    for r in records {
        match (r.event, r.topic.as_deref()) {
            (Lifecycle::Muted | Lifecycle::Unmuted, Some(topic)) if latest.get(topic).is_none_or(|p| p.at <= r.at) => {
                latest.insert(topic, r);
            }
            (Lifecycle::Snoozed, _) if snooze.is_none_or(|p| p.at <= r.at) => snooze = Some(r),
            _ => {}
        }
    }
    for (topic, r) in latest {
        if let (Lifecycle::Muted, Some(until)) = (r.event, r.until) {
            if until > now {
                s.muted.insert(topic.to_owned(), until);
            }
        }
    }
    s.snoozed_until = snooze.and_then(|r| r.until).filter(|u| *u > now);
}
