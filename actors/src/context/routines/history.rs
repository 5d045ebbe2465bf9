//! HistoryWriter: one line per user message in `workspace/history.md`, the file the
//! [`RoutineLearner`](super::RoutineLearner) and the [`RoutineStore`](super::RoutineStore) read.
//!
//! A line is `YYYY-MM-DD HH:MM <text>`, local time in the user's zone, which
//! [`parse_history_line`] reads back: the text on one line (control characters and runs of
//! white space folded to one space), trimmed, at most [`MAX_CHARS`] characters. Empty
//! messages and slash commands are not history.
//!
//! Every append and every rotation holds the file's sidecar lock (`history.md.lock`), and the
//! appender opens the file only once it holds the lock, so a line is never written into a
//! file that a rotation has just replaced. A rotation is an atomic replace: a reader sees the
//! old file or the new one. Lines without a stamp are the user's own notes and are kept.

use super::parse_history_line;
use crate::store::{lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, Days, NaiveDate, Utc};
use chrono_tz::Tz;
use std::path::PathBuf;

/// The longest text kept for one message, in characters.
pub const MAX_CHARS: usize = 200;
/// Above this size the file is rotated: stamped lines older than `keep_days` are dropped.
pub const ROTATE_BYTES: u64 = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("history file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Appends user messages to the history file and keeps it under [`ROTATE_BYTES`].
#[derive(Debug, Clone)]
pub struct HistoryWriter {
    path: PathBuf,
    keep_days: u32,
}

impl HistoryWriter {
    /// `keep_days`: how many local days of stamped lines a rotation keeps before today's.
    pub fn new(path: impl Into<PathBuf>, keep_days: u32) -> Self {
        HistoryWriter { path: path.into(), keep_days }
    }

    #[cfg(test)]
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends `YYYY-MM-DD HH:MM <text>` (local time in `tz`) for one user message, see
    /// [`history_text`]; `Ok(false)`, with nothing written, for an empty message or a slash
    /// command. Then rotates the file if it is due; a failed rotation is logged, not returned,
    /// since the line itself was recorded.
    pub fn record(&self, text: &str, at: DateTime<Utc>, tz: Tz) -> Result<bool, HistoryError> {
        let Some(text) = history_text(text) else {
            return Ok(false);
        };
        let line = format!("{} {text}\n", at.with_timezone(&tz).format("%Y-%m-%d %H:%M"));
        let _lock = self.lock()?;
        self.append(line.as_bytes()).map_err(|e| self.io(e))?;
        if let Err(e) = self.rotate_locked(at, tz) {
            tracing::warn!(error = %e, "history rotation failed; the file keeps growing until it succeeds");
        }
        Ok(true)
    }

    /// When the file is larger than [`ROTATE_BYTES`], rewrites it keeping only the lines
    /// whose stamp is on or after the local day `keep_days` before `now`, and every line
    /// without a stamp. `Ok(true)` when it rewrote the file. A small (or missing) file costs
    /// one metadata call.
    #[cfg(test)]
    pub fn rotate_if_due(&self, now: DateTime<Utc>, tz: Tz) -> Result<bool, HistoryError> {
        if !self.over_limit()? {
            return Ok(false);
        }
        let _lock = self.lock()?;
        self.rotate_locked(now, tz)
    }

    /// The rotation itself; the caller holds the lock.
    fn rotate_locked(&self, now: DateTime<Utc>, tz: Tz) -> Result<bool, HistoryError> {
        if !self.over_limit()? {
            return Ok(false);
        }
        let Some(cutoff) = now.with_timezone(&tz).date_naive().checked_sub_days(Days::new(self.keep_days.into()))
        else {
            return Ok(false);
        };
        let bytes = std::fs::read(&self.path).map_err(|e| self.io(e))?;
        let kept = keep_since(&bytes, cutoff);
        if kept.len() == bytes.len() {
            return Ok(false);
        }
        write_atomic(&self.path, &kept).map_err(|e| self.io(e))?;
        tracing::info!(
            path = %self.path.display(),
            before = bytes.len(),
            after = kept.len(),
            "history rotated: dropped stamped lines before {cutoff}"
        );
        Ok(true)
    }

    fn over_limit(&self) -> Result<bool, HistoryError> {
        match std::fs::metadata(&self.path) {
            Ok(m) => Ok(m.len() > ROTATE_BYTES),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.io(e)),
        }
    }

    /// One write of `line`, whole or not at all, preceded by a newline when the file (edited
    /// by hand) does not end with one, so the line never runs on from the user's last line.
    fn append(&self, line: &[u8]) -> std::io::Result<()> {
        crate::store::files::append_whole(&mut crate::store::files::open_append(&self.path)?, line)
    }

    fn lock(&self) -> Result<FileLock, HistoryError> {
        let lock = lock_path_for(&self.path);
        FileLock::exclusive(&lock).map_err(|source| HistoryError::Io { path: lock, source })
    }

    fn io(&self, source: std::io::Error) -> HistoryError {
        HistoryError::Io { path: self.path.clone(), source }
    }
}

/// The text a message leaves in the history: control characters and white space folded
/// to single spaces, trimmed, cut to [`MAX_CHARS`] characters (never inside a character,
/// never ending on a space). `None` for an empty message or a slash command.
pub fn history_text(message: &str) -> Option<String> {
    let mut out = String::with_capacity(message.len().min(MAX_CHARS * 4));
    let mut chars = 0;
    let mut space = false;
    for c in message.chars() {
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        // A space takes a character only when one more can follow it.
        if space && chars + 2 > MAX_CHARS || chars + 1 > MAX_CHARS {
            break;
        }
        if space {
            out.push(' ');
            chars += 1;
            space = false;
        }
        out.push(c);
        chars += 1;
    }
    (!out.is_empty() && !out.starts_with('/')).then_some(out)
}

/// The lines of `bytes` that have no stamp or a stamp on or after `cutoff`, byte for byte.
fn keep_since(bytes: &[u8], cutoff: NaiveDate) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(line);
        if parse_history_line(&text).is_none_or(|(at, _)| at.date() >= cutoff) {
            out.extend_from_slice(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDateTime, TimeZone};
    use std::path::Path;

    fn berlin() -> Tz {
        chrono_tz::Europe::Berlin
    }

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
    }

    #[test]
    fn a_line_is_local_stamp_and_folded_text_read_back_by_the_parser() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace/history.md");
        let w = HistoryWriter::new(&path, 30);
        // 08:05 UTC is 09:05 in Berlin (CET).
        assert!(w.record("  Take\r\nmy \t\u{7}medication\u{2028}now  \n", at(2026, 3, 1, 8, 5), berlin()).unwrap());
        assert_eq!(lines(&path), ["2026-03-01 09:05 Take my medication now"]);
        let l = &lines(&path)[0];
        let (stamp, text) = parse_history_line(l).unwrap();
        assert_eq!(stamp, NaiveDateTime::parse_from_str("2026-03-01 09:05", "%Y-%m-%d %H:%M").unwrap());
        assert_eq!(text, "Take my medication now");
    }

    #[test]
    fn long_multibyte_text_is_cut_at_200_characters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        let w = HistoryWriter::new(&path, 30);
        let msg = format!("a{}", "é🎉".repeat(150));
        assert!(w.record(&msg, at(2026, 3, 1, 8, 5), berlin()).unwrap());
        let l = &lines(&path)[0];
        let (_, text) = parse_history_line(l).unwrap();
        assert_eq!(text.chars().count(), MAX_CHARS);
        assert!(msg.starts_with(text));
        // A space at the cut is not kept as the last character.
        let spaced = format!("{} tail", "x".repeat(MAX_CHARS - 1));
        assert_eq!(history_text(&spaced).unwrap(), "x".repeat(MAX_CHARS - 1));
        let exact = "y".repeat(MAX_CHARS + 5);
        assert_eq!(history_text(&exact).unwrap().chars().count(), MAX_CHARS);
    }

    #[test]
    fn commands_and_empty_messages_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        let w = HistoryWriter::new(&path, 30);
        for msg in ["/help", "  /status now", "", " \n\t\u{0} "] {
            assert!(!w.record(msg, at(2026, 3, 1, 8, 5), berlin()).unwrap(), "{msg:?}");
        }
        assert!(!path.exists());
        assert!(w.record("a path like /tmp is fine", at(2026, 3, 1, 8, 5), berlin()).unwrap());
        assert_eq!(lines(&path).len(), 1);
    }

    #[test]
    fn a_line_never_runs_on_from_a_hand_edited_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        std::fs::write(&path, "# my notes").unwrap();
        HistoryWriter::new(&path, 30).record("water", at(2026, 3, 1, 8, 5), berlin()).unwrap();
        assert_eq!(lines(&path), ["# my notes", "2026-03-01 09:05 water"]);
    }

    #[test]
    fn rotation_keeps_recent_stamped_lines_and_every_unstamped_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        let w = HistoryWriter::new(&path, 7);
        let old = "2026-01-01 09:00 an old message that only pads the file out\n";
        let mut content = String::from("# History\n");
        content.push_str(&old.repeat(20_000));
        content.push_str("my own note, no stamp\n- 2026-02-21 10:00 user: older than a week\n");
        content.push_str("- 2026-02-22 10:00 user: exactly a week old\n[2026-02-28 23:59] late\n");
        std::fs::write(&path, &content).unwrap();
        let now = at(2026, 3, 1, 11, 0);

        // Small enough: nothing to do, even with old lines in it.
        std::fs::write(&path, &content[..4096]).unwrap();
        assert!(!w.rotate_if_due(now, berlin()).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), &content[..4096]);

        std::fs::write(&path, &content).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > ROTATE_BYTES);
        assert!(w.rotate_if_due(now, berlin()).unwrap());
        let want = [
            "# History",
            "my own note, no stamp",
            "- 2026-02-22 10:00 user: exactly a week old",
            "[2026-02-28 23:59] late",
        ];
        assert_eq!(lines(&path), want);
        // Nothing left to drop: no second rewrite.
        assert!(!w.rotate_if_due(now, berlin()).unwrap());
    }

    #[test]
    fn record_rotates_a_file_that_grew_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        let old = "2025-12-01 09:00 an old message that only pads the file out\n";
        std::fs::write(&path, old.repeat(20_000)).unwrap();
        let w = HistoryWriter::new(&path, 30);
        assert!(w.record("fresh", at(2026, 3, 1, 8, 5), berlin()).unwrap());
        assert_eq!(lines(&path), ["2026-03-01 09:05 fresh"]);
    }
}
