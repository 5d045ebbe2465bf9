//! NudgeFeedbackTracker (spec §8): the lifecycle log of every nudge (dispatched, then
//! accepted / dismissed / neutral) as JSONL, its recent acceptance rates, and a daily trim.

mod summary;
pub mod tool;

pub use summary::{FeedbackSummary, Rate, TopicFeedback};

use crate::config::FeedbackConfig;
use crate::store::{lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::Priority;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    Dispatched,
    Accepted,
    Dismissed,
    Neutral,
}

impl Lifecycle {
    /// The verdicts the `nudge_feedback` tool may give.
    pub fn parse_verdict(s: &str) -> Option<Lifecycle> {
        match s.trim() {
            "accepted" => Some(Lifecycle::Accepted),
            "dismissed" => Some(Lifecycle::Dismissed),
            "neutral" => Some(Lifecycle::Neutral),
            _ => None,
        }
    }
}

/// Who proposed the nudge. A cron fire is user-initiated: recorded, never rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    #[default]
    Sentinel,
    Cron,
    Discovery,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRecord {
    pub at: DateTime<Utc>,
    pub nudge_id: String,
    pub event: Lifecycle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default)]
    pub source: Source,
    /// A dismissal that said "stop" (see [`is_hard_reject`]).
    #[serde(default)]
    pub hard: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A dismissal whose reason asks to stop altogether weighs more in layer 8.
pub fn is_hard_reject(reason: &str) -> bool {
    let r = reason.to_lowercase();
    ["stop", "never", "don't remind", "do not remind", "not interested", "leave me alone"].iter().any(|p| r.contains(p))
}

#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error("feedback log {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("unknown verdict `{0}`: use accepted, dismissed or neutral")]
    BadVerdict(String),
}

#[derive(Debug)]
pub struct NudgeFeedbackTracker {
    path: PathBuf,
    lock_path: PathBuf,
    config: FeedbackConfig,
    tz: Tz,
    last_trim: Option<NaiveDate>,
}

impl NudgeFeedbackTracker {
    pub fn new(path: impl Into<PathBuf>, config: FeedbackConfig, tz: Tz) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        NudgeFeedbackTracker { path, lock_path, config, tz, last_trim: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> FeedbackError {
        FeedbackError::Io { path: self.path.clone(), source }
    }

    /// Appends one record under the log's lock (one `write` of a whole line).
    pub fn append(&self, record: &FeedbackRecord) -> Result<(), FeedbackError> {
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let mut line = serde_json::to_vec(record).map_err(|e| self.io(e.into()))?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        // A line torn by a crash must not swallow the next record: start on a fresh line.
        if ends_without_newline(&mut f).map_err(|e| self.io(e))? {
            line.insert(0, b'\n');
        }
        f.write_all(&line).map_err(|e| self.io(e))?;
        f.sync_data().map_err(|e| self.io(e))
    }

    pub fn record_dispatched(
        &self,
        nudge_id: &str,
        topic: &str,
        priority: Priority,
        session: Option<&str>,
        source: Source,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        self.append(&FeedbackRecord {
            at,
            nudge_id: nudge_id.to_owned(),
            event: Lifecycle::Dispatched,
            topic: Some(topic.to_owned()),
            priority: Some(priority),
            session: session.map(str::to_owned),
            source,
            hard: false,
            reason: None,
        })
    }

    /// What the `nudge_feedback` tool records.
    pub fn record_verdict(
        &self,
        nudge_id: &str,
        verdict: &str,
        reason: &str,
        at: DateTime<Utc>,
    ) -> Result<Lifecycle, FeedbackError> {
        let event = Lifecycle::parse_verdict(verdict).ok_or_else(|| FeedbackError::BadVerdict(verdict.to_owned()))?;
        self.append(&FeedbackRecord {
            at,
            nudge_id: nudge_id.to_owned(),
            event,
            topic: None,
            priority: None,
            session: None,
            source: Source::Sentinel,
            hard: event == Lifecycle::Dismissed && is_hard_reject(reason),
            reason: (!reason.is_empty()).then(|| reason.to_owned()),
        })?;
        Ok(event)
    }

    /// A cron fire: a dispatched record and an immediate neutral verdict, so the fire is on
    /// record without moving the acceptance rate the Sentinel learns from.
    pub fn record_cron_fire(&self, nudge_id: &str, topic: &str, at: DateTime<Utc>) -> Result<(), FeedbackError> {
        self.record_dispatched(nudge_id, topic, Priority::Low, None, Source::Cron, at)?;
        self.append(&FeedbackRecord {
            at,
            nudge_id: nudge_id.to_owned(),
            event: Lifecycle::Neutral,
            topic: Some(topic.to_owned()),
            priority: None,
            session: None,
            source: Source::Cron,
            hard: false,
            reason: Some("cron fire".into()),
        })
    }

    /// Every record that parses; a torn or foreign line is skipped with a warning.
    pub fn records(&self) -> Result<Vec<FeedbackRecord>, FeedbackError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            match serde_json::from_str(line) {
                Ok(r) => out.push(r),
                Err(e) => {
                    tracing::warn!(file = %self.path.display(), line = i + 1, "skipping unreadable feedback record: {e}")
                }
            }
        }
        Ok(out)
    }

    /// Acceptance rates over the window: overall, per topic, high priority, per hour.
    pub fn summary(&self, now: DateTime<Utc>) -> Result<FeedbackSummary, FeedbackError> {
        Ok(summarize(&self.records()?, now, &self.config, self.tz))
    }

    /// Drops records older than the retention, at most once per local day.
    pub fn trim_if_due(&mut self, now: DateTime<Utc>) -> Result<bool, FeedbackError> {
        let today = now.with_timezone(&self.tz).date_naive();
        if self.last_trim == Some(today) {
            return Ok(false);
        }
        let cutoff = now - chrono::Duration::days(self.config.retention_days);
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let records = self.records()?;
        let kept: Vec<_> = records.iter().filter(|r| r.at >= cutoff).collect();
        if kept.len() != records.len() {
            let mut bytes = Vec::new();
            for r in kept {
                serde_json::to_writer(&mut bytes, r).map_err(|e| self.io(e.into()))?;
                bytes.push(b'\n');
            }
            write_atomic(&self.path, &bytes).map_err(|e| self.io(e))?;
        }
        self.last_trim = Some(today);
        Ok(true)
    }
}

fn ends_without_newline(f: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if f.metadata()?.len() == 0 {
        return Ok(false);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// The pure part of [`NudgeFeedbackTracker::summary`].
pub fn summarize(records: &[FeedbackRecord], now: DateTime<Utc>, cfg: &FeedbackConfig, tz: Tz) -> FeedbackSummary {
    let since = now - chrono::Duration::days(cfg.window_days);
    let dispatched: HashMap<&str, &FeedbackRecord> =
        records.iter().filter(|r| r.event == Lifecycle::Dispatched).map(|r| (r.nudge_id.as_str(), r)).collect();
    // The latest verdict per nudge wins (a user may change their mind).
    let mut verdicts: HashMap<&str, &FeedbackRecord> = HashMap::new();
    for r in records.iter().filter(|r| r.event != Lifecycle::Dispatched && r.at >= since) {
        match verdicts.get(r.nudge_id.as_str()) {
            Some(prev) if prev.at > r.at => {}
            _ => {
                verdicts.insert(&r.nudge_id, r);
            }
        }
    }
    let mut s = FeedbackSummary { by_hour: vec![Rate::default(); 24], ..Default::default() };
    let half_life_s = cfg.reject_half_life_days * 86_400.0;
    for (id, v) in verdicts {
        let d = dispatched.get(id);
        if d.map(|d| d.source) == Some(Source::Cron) || v.source == Source::Cron {
            continue;
        }
        let accepted = match v.event {
            Lifecycle::Accepted => true,
            Lifecycle::Dismissed => false,
            _ => continue,
        };
        let topic = v.topic.clone().or_else(|| d.and_then(|d| d.topic.clone()));
        let priority = v.priority.or_else(|| d.and_then(|d| d.priority));
        let sent_at = d.map(|d| d.at).unwrap_or(v.at);
        let hour = sent_at.with_timezone(&tz).hour() as usize;
        let bump = |rate: &mut Rate| {
            if accepted {
                rate.accepted += 1
            } else {
                rate.dismissed += 1
            }
        };
        bump(&mut s.overall);
        bump(&mut s.by_hour[hour]);
        if priority == Some(Priority::High) {
            bump(&mut s.high_priority);
        }
        if let Some(topic) = topic {
            let t = s.by_topic.entry(topic).or_default();
            bump(&mut t.rate);
            if !accepted {
                let age_s = (now - v.at).num_seconds().max(0) as f64;
                let base = if v.hard { cfg.hard_reject_weight } else { cfg.dismiss_weight };
                t.reject_weight += base * 0.5f64.powf(age_s / half_life_s);
                t.last_reject = t.last_reject.max(Some(v.at));
            }
        }
        if !accepted {
            s.last_dismissal = s.last_dismissal.max(Some(v.at));
        }
    }
    s
}

#[cfg(test)]
mod tests;
