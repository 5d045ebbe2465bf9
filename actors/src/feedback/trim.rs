//! What the daily trim does to the lifecycle log: a record past the retention is dropped; a
//! record kept is written back as the bytes it was read as (fields this version does not
//! know, and the line's formatting, survive); a line that does not parse (bad JSON, another
//! shape, a byte that is not UTF-8) is moved to `<log>.rejected` beside the log, never
//! deleted.

use super::FeedbackRecord;
use crate::store::jsonl;
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

/// The log's lines sorted by what the trim does with them.
#[derive(Debug, Default)]
pub(super) struct Plan<'a> {
    /// Lines written back, as read.
    kept: Vec<&'a [u8]>,
    /// How many records are past the retention.
    dropped: usize,
    /// Lines that do not parse, as read.
    rejected: Vec<&'a [u8]>,
}

impl<'a> Plan<'a> {
    /// Sorts the lines of `bytes` (the log at `path`) against `cutoff`; a line that does not
    /// parse is [reported](jsonl::report), once per process.
    pub(super) fn of(path: &Path, bytes: &'a [u8], cutoff: DateTime<Utc>) -> Plan<'a> {
        let mut plan = Plan::default();
        for (number, line) in jsonl::lines(bytes) {
            match jsonl::parse::<FeedbackRecord>(line) {
                Ok(record) if record.at < cutoff => plan.dropped += 1,
                Ok(_) => plan.kept.push(line),
                Err(e) => {
                    jsonl::report(path, number, line, &e);
                    plan.rejected.push(line);
                }
            }
        }
        plan
    }

    /// Whether the log stays as it is.
    pub(super) fn changes_nothing(&self) -> bool {
        self.dropped == 0 && self.rejected.is_empty()
    }

    /// The log as the trim leaves it.
    pub(super) fn kept_bytes(&self) -> Vec<u8> {
        joined(&self.kept)
    }

    /// What goes to the rejected file; `None` when nothing does.
    pub(super) fn rejected_bytes(&self) -> Option<Vec<u8>> {
        (!self.rejected.is_empty()).then(|| joined(&self.rejected))
    }

    pub(super) fn rejected_count(&self) -> usize {
        self.rejected.len()
    }
}

/// `<log>.rejected`, beside the log.
pub(super) fn rejected_path(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(".rejected");
    log.with_file_name(name)
}

/// Each line followed by `\n`.
fn joined(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}
