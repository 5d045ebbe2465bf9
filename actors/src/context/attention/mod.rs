//! AttentionUpdater (spec §9): each producer owns one H2 section of `attention.md`. Phase one
//! computes every section outside the lock; phase two splices them in under the file's lock
//! and writes only when something changed (a cold tick does not touch the file). A failing
//! producer leaves its section as it was, and so does a section that cannot be spliced in
//! without disturbing the rest of the file (see `sections`); the others still update.

pub(crate) mod producers;
pub mod sections;

use super::daily_analysis::DailyAnalysis;
use super::plan::PlanSlot;
use crate::feedback::FeedbackSummary;
use crate::store::{lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use raven_proto::Routine;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// What the producers compute from: this tick's context, the feedback, the day's plan.
#[derive(Debug, Clone)]
pub struct ProducerInput {
    pub now: DateTime<Utc>,
    pub tz: Tz,
    pub order: crate::time::DateOrder,
    pub memory_md: std::sync::Arc<str>,
    pub history_md: String,
    pub routines: Vec<Routine>,
    pub feedback: FeedbackSummary,
    pub plan: Vec<PlanSlot>,
    /// Today's shared LLM analysis; `None` when the service is off or has not run.
    pub daily_analysis: Option<DailyAnalysis>,
}

pub trait Producer: Send {
    /// The H2 title it owns.
    fn section(&self) -> &'static str;

    /// A producer whose source is off (the daily analysis, say) is skipped: its section is
    /// left as it was and nothing counts as failed.
    fn enabled(&self, _input: &ProducerInput) -> bool {
        true
    }

    fn produce(&self, input: &ProducerInput) -> Result<String, ProduceError>;
}

/// Why a producer made no section (its section is left as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProduceError {
    /// The source the section is built from is not there yet (`no daily analysis`).
    #[error("no {0}")]
    Missing(&'static str),
}

#[derive(Debug, Default, PartialEq)]
pub struct UpdateReport {
    pub written: bool,
    /// Producers that failed (their sections were left as they were), with why.
    pub failed: Vec<(&'static str, String)>,
    /// Producers whose source is off.
    pub skipped: Vec<&'static str>,
}

pub struct AttentionUpdater {
    path: PathBuf,
    lock_path: PathBuf,
    producers: Vec<Box<dyn Producer>>,
    /// The file as the last update left it and the bodies spliced into it: the same bodies
    /// into the same text change nothing, so they are not spliced again (a CommonMark parse
    /// of the file per section, every tick, otherwise).
    last: std::sync::Mutex<Option<Spliced>>,
}

/// A file as an update left it, and the `(section, body)` pairs spliced into it.
type Spliced = (String, Vec<(&'static str, String)>);

impl AttentionUpdater {
    pub fn new(path: impl Into<PathBuf>, producers: Vec<Box<dyn Producer>>) -> Self {
        let path = path.into();
        let lock_path = lock_path_for(&path);
        AttentionUpdater { path, lock_path, producers, last: Default::default() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn update(&self, input: &ProducerInput) -> std::io::Result<UpdateReport> {
        let mut report = UpdateReport::default();
        // Phase one, out of the lock: a slow producer never blocks a peer's splice.
        let mut bodies = Vec::new();
        for p in &self.producers {
            if !p.enabled(input) {
                report.skipped.push(p.section());
                continue;
            }
            match catch_unwind(AssertUnwindSafe(|| p.produce(input))) {
                Ok(Ok(body)) => bodies.push((p.section(), body)),
                Ok(Err(e)) => report.failed.push((p.section(), e.to_string())),
                Err(_) => report.failed.push((p.section(), "producer panicked".into())),
            }
        }
        for (section, why) in &report.failed {
            tracing::warn!(section, "attention producer failed, its section is left as it was: {why}");
        }
        // Phase two, under the lock.
        let _lock = FileLock::exclusive(&self.lock_path)?;
        let current = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_ref().is_some_and(|(text, spliced)| *text == current && *spliced == bodies) {
            return Ok(report);
        }
        let start = if current.is_empty() { "# Attention\n\n".to_owned() } else { current.clone() };
        let mut next = start;
        for (section, body) in bodies.iter().cloned() {
            match sections::splice(&next, section, &body) {
                Ok(text) => next = text,
                Err(e) => {
                    tracing::warn!(section, "attention section left as it was: {e}");
                    report.failed.push((section, e.to_string()));
                }
            }
        }
        if next != current {
            write_atomic(&self.path, next.as_bytes())?;
            report.written = true;
        }
        // A section that failed is tried again next time.
        *last = report.failed.is_empty().then_some((next, bodies));
        Ok(report)
    }
}

#[cfg(test)]
mod tests;
