//! NudgeFeedbackTracker (spec §8): the lifecycle log of every proactive message
//! (dispatched, then engaged / ignored / accepted / dismissed / neutral, and the user's
//! mutes and snoozes) as JSONL, its recent acceptance rates, and a daily trim.
//!
//! The log is read line by line as bytes: a line that does not parse is skipped (reported
//! once) and the other records are read. The trim moves such lines to `<log>.rejected` and
//! writes the records it keeps back as they were read (see [`trim`]).

pub mod give;
mod pending;
mod record;
mod summary;
pub(crate) mod tool;
mod trim;

pub use record::{is_hard_reject, short_id, BriefItem, Dispatch, FeedbackRecord, Lifecycle, Source};
pub use summary::{summarize, FeedbackSummary, Rate, TopicFeedback, EARLIER};

use crate::config::FeedbackConfig;
use crate::journal::Journal;
use crate::store::{jsonl, lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error("feedback log {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "the unreadable lines of the feedback log cannot be kept in {path} ({source}); the log was left as it was"
    )]
    Rejected { path: PathBuf, source: std::io::Error },
    #[error("unknown verdict `{0}`: use accepted, dismissed or neutral")]
    BadVerdict(String),
    #[error("no proactive message has the id `{0}`")]
    UnknownId(String),
    #[error("`{0}` is a cron reminder: a reminder you scheduled is not rated (use /stop to pause its job)")]
    CronId(String),
}

#[derive(Debug)]
pub struct NudgeFeedbackTracker {
    path: PathBuf,
    lock_path: PathBuf,
    config: FeedbackConfig,
    tz: Tz,
    /// The day of the last trim (shared by every user of this tracker, on any thread).
    last_trim: std::sync::Mutex<Option<NaiveDate>>,
    journal: Journal,
}

impl NudgeFeedbackTracker {
    pub fn new(path: impl Into<PathBuf>, config: FeedbackConfig, tz: Tz) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        NudgeFeedbackTracker { path, lock_path, config, tz, last_trim: Default::default(), journal: Journal::off() }
    }

    /// Each verdict appended (not the `dispatched` records) is also a journal line.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    fn io(&self, source: std::io::Error) -> FeedbackError {
        FeedbackError::Io { path: self.path.clone(), source }
    }

    pub fn config(&self) -> &FeedbackConfig {
        &self.config
    }

    /// Appends one record under the log's lock (one `write` of a whole line).
    pub fn append(&self, record: &FeedbackRecord) -> Result<(), FeedbackError> {
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        self.append_locked(std::slice::from_ref(record))
    }

    /// Appends `records` with the lock already held by the caller.
    fn append_locked(&self, records: &[FeedbackRecord]) -> Result<(), FeedbackError> {
        let mut bytes = Vec::new();
        for r in records {
            serde_json::to_writer(&mut bytes, r).map_err(|e| self.io(e.into()))?;
            bytes.push(b'\n');
        }
        append_synced(&self.path, bytes).map_err(|e| self.io(e))?;
        for r in records {
            self.journal_verdict(r);
        }
        Ok(())
    }

    /// The user gives verdicts; only `ignored` comes from the no-reply timer of the Sentinel.
    fn journal_verdict(&self, r: &FeedbackRecord) {
        let source = if matches!(r.event, Lifecycle::Ignored) { "sentinel" } else { "user" };
        if let Some(event) = r.journal_event() {
            self.journal.record(r.at, Some(source), event);
        }
    }

    /// What the one place that says things proactively records once a message reached
    /// `session` (see [`crate::delivery::conversation`]).
    #[cfg(test)]
    pub fn record_dispatched(
        &self,
        d: &Dispatch,
        session: Option<&str>,
        visible: bool,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        self.record_said(d, session, visible, "", at)
    }

    /// [`Self::record_dispatched`], keeping the message's `text` (cut to [`record::KEPT_TEXT`]
    /// characters) for a "later" to send again.
    pub fn record_said(
        &self,
        d: &Dispatch,
        session: Option<&str>,
        visible: bool,
        text: &str,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        self.append(&said_record(d, session, visible, text, at))
    }

    /// One item of the brief `brief` as a message of its own: its id, topic, text and kind.
    pub fn record_item(
        &self,
        brief: &Dispatch,
        item: &BriefItem,
        session: Option<&str>,
        visible: bool,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        let one =
            Dispatch { nudge_id: item.nudge_id.clone(), topic: item.topic.clone(), items: Vec::new(), ..brief.clone() };
        self.append(&FeedbackRecord { kind: item.kind.clone(), ..said_record(&one, session, visible, &item.text, at) })
    }

    /// An explicit verdict on one message (the tool, a command, `raven feedback`). The
    /// record carries the message's topic and source, so a reader needs no join.
    pub fn record_verdict(
        &self,
        nudge_id: &str,
        verdict: &str,
        reason: &str,
        at: DateTime<Utc>,
    ) -> Result<Lifecycle, FeedbackError> {
        let event = Lifecycle::parse_verdict(verdict).ok_or_else(|| FeedbackError::BadVerdict(verdict.to_owned()))?;
        let sent = self.records()?.into_iter().find(|r| r.nudge_id == nudge_id && r.event == Lifecycle::Dispatched);
        self.append(&FeedbackRecord {
            topic: sent.as_ref().and_then(|r| r.topic.clone()),
            priority: sent.as_ref().and_then(|r| r.priority),
            session: sent.as_ref().and_then(|r| r.session.clone()),
            source: sent.as_ref().map(|r| r.source).unwrap_or_default(),
            hard: event == Lifecycle::Dismissed && is_hard_reject(reason),
            reason: (!reason.is_empty()).then(|| reason.to_owned()),
            ..FeedbackRecord::new(at, nudge_id, event)
        })?;
        Ok(event)
    }

    /// "Later" on `sent`: put off until `until`, when job `job` sends it again. It settles the
    /// message's no-reply timer and rates it neither way.
    pub fn record_later(
        &self,
        sent: &FeedbackRecord,
        until: DateTime<Utc>,
        job: &str,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        self.append(&FeedbackRecord {
            until: Some(until),
            reason: Some(format!("sent again by job {job}")),
            ..sent.following(Lifecycle::Later, at)
        })
    }

    /// The dispatched record of `id` (a full id or a short one), whatever its source.
    pub fn dispatched_message(&self, id: &str) -> Result<FeedbackRecord, FeedbackError> {
        let id = id.trim();
        self.records()?
            .into_iter()
            .find(|r| r.event == Lifecycle::Dispatched && (r.nudge_id == id || short_id(&r.nudge_id) == id))
            .ok_or_else(|| FeedbackError::UnknownId(id.to_owned()))
    }

    /// The dispatched record of `id` (a full id or a short one), refusing a cron reminder.
    pub fn rated_message(&self, id: &str) -> Result<FeedbackRecord, FeedbackError> {
        let found = self.dispatched_message(id)?;
        if !found.source.is_rated() {
            return Err(FeedbackError::CronId(id.trim().to_owned()));
        }
        Ok(found)
    }

    /// `/stop <topic>` (until `until`) or `/ok <topic>` (`until` = `None`).
    pub fn record_mute(
        &self,
        topic: &str,
        until: Option<DateTime<Utc>>,
        at: DateTime<Utc>,
    ) -> Result<(), FeedbackError> {
        let event = if until.is_some() { Lifecycle::Muted } else { Lifecycle::Unmuted };
        self.append(&FeedbackRecord {
            topic: Some(topic.to_owned()),
            until,
            ..FeedbackRecord::new(at, format!("{}:{topic}", event.name()), event)
        })
    }

    /// `/snooze`: nothing proactive but cron until `until` (`at` itself ends a snooze).
    pub fn record_snooze(&self, until: DateTime<Utc>, at: DateTime<Utc>) -> Result<(), FeedbackError> {
        self.append(&FeedbackRecord { until: Some(until), ..FeedbackRecord::new(at, "snooze", Lifecycle::Snoozed) })
    }

    /// Every record that parses; a torn or foreign line, or one with a byte that is not
    /// UTF-8, is skipped (with a warning the first time it is seen).
    pub fn records(&self) -> Result<Vec<FeedbackRecord>, FeedbackError> {
        jsonl::read(&self.path).map_err(|e| self.io(e))
    }

    /// Acceptance rates over the window: overall, per topic, high priority, per hour.
    pub fn summary(&self, now: DateTime<Utc>) -> Result<FeedbackSummary, FeedbackError> {
        Ok(summarize(&self.records()?, now, &self.config, self.tz))
    }

    /// Drops records older than the retention and moves unreadable lines to the rejected
    /// file (see [`trim`]), at most once per local day.
    pub fn trim_if_due(&self, now: DateTime<Utc>) -> Result<bool, FeedbackError> {
        let today = now.with_timezone(&self.tz).date_naive();
        if *self.last_trim.lock().unwrap_or_else(|p| p.into_inner()) == Some(today) {
            return Ok(false);
        }
        let cutoff = now - chrono::Duration::days(self.config.retention_days);
        self.trim(cutoff)?;
        *self.last_trim.lock().unwrap_or_else(|p| p.into_inner()) = Some(today);
        Ok(true)
    }

    /// One trim, under the log's lock: the unreadable lines are appended to the rejected file
    /// and synced first; only then is the log replaced without them. A failed append leaves
    /// the log as it was.
    fn trim(&self, cutoff: DateTime<Utc>) -> Result<(), FeedbackError> {
        let _lock = FileLock::exclusive(&self.lock_path).map_err(|e| self.io(e))?;
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.io(e)),
        };
        let plan = trim::Plan::of(&self.path, &bytes, cutoff);
        if plan.changes_nothing() {
            return Ok(());
        }
        if let Some(rejected) = plan.rejected_bytes() {
            let path = trim::rejected_path(&self.path);
            append_synced(&path, rejected).map_err(|source| FeedbackError::Rejected { path: path.clone(), source })?;
            tracing::warn!(
                "{}: {} unreadable line(s) moved to {}",
                self.path.display(),
                plan.rejected_count(),
                path.display()
            );
        }
        write_atomic(&self.path, &plan.kept_bytes()).map_err(|e| self.io(e))
    }
}

/// Appends `bytes` (whole lines) to the file at `path`, whole or not at all, on a line of
/// their own, and syncs it.
fn append_synced(path: &Path, bytes: Vec<u8>) -> std::io::Result<()> {
    let mut f = crate::store::files::open_append(path)?;
    crate::store::files::append_whole(&mut f, &bytes)?;
    f.sync_data()
}

/// The `dispatched` record of `d` once it reached `session`, keeping `text` (cut to
/// [`record::KEPT_TEXT`] characters) for a "later" to send again.
fn said_record(d: &Dispatch, session: Option<&str>, visible: bool, text: &str, at: DateTime<Utc>) -> FeedbackRecord {
    let text = text.trim();
    FeedbackRecord {
        text: (!text.is_empty()).then(|| text.chars().take(record::KEPT_TEXT).collect()),
        topic: Some(d.topic.clone()),
        priority: Some(d.priority),
        session: session.map(str::to_owned),
        source: d.source,
        visible,
        job: d.job.clone(),
        ..FeedbackRecord::new(at, &d.nudge_id, Lifecycle::Dispatched)
    }
}

#[cfg(test)]
mod tests;
