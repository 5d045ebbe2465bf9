//! `## Notes from Raven`: the one section of MEMORY.md the agent writes, one dated line per
//! note, created at the end of the file when missing. Every other byte of the file is kept
//! (the section is found as CommonMark, see [`crate::context::attention::sections`]), the
//! preferences section is never touched, and the write is the one jobs.json uses against a
//! hand edit made at the same moment ([`crate::store::edits`]): the user's edit wins and the
//! note is written again on top of it.

use crate::context::attention::sections::{self, SpliceError};
use crate::store::edits::{replace_unless_edited, Replaced, Snapshot};
use crate::store::{lock_path_for, FileLock};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::path::PathBuf;

pub const SECTION: &str = "Notes from Raven";
/// A note is one line of at most this many characters.
pub const NOTE_CHARS: usize = 500;
/// Tries on a file that keeps being edited while a note is written.
const TRIES: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    #[error("the note is empty")]
    Empty,
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not UTF-8 text; the note was not written (the file is left as it is)")]
    NotText { path: PathBuf },
    #[error("{path}: the note cannot be added without changing other sections: {source}")]
    Splice { path: PathBuf, source: SpliceError },
    #[error("{path} kept changing while the note was written ({TRIES} tries); nothing was written")]
    Busy { path: PathBuf },
}

/// MEMORY.md, as the agent writes notes into it.
#[derive(Debug, Clone)]
pub struct MemoryNotes {
    pub path: PathBuf,
    pub tz: Tz,
}

impl MemoryNotes {
    /// Appends `note` (made one line, cut at [`NOTE_CHARS`]) dated `at`; answers the line.
    pub fn append(&self, note: &str, at: DateTime<Utc>) -> Result<String, NoteError> {
        let line = format!("- {}: {}", at.with_timezone(&self.tz).format("%Y-%m-%d"), one_line(note)?);
        let io = |source| NoteError::Io { path: self.path.clone(), source };
        let _lock = FileLock::exclusive(&lock_path_for(&self.path)).map_err(io)?;
        for _ in 0..TRIES {
            let snapshot = Snapshot::take(&self.path);
            let text = self.read()?;
            let updated =
                with_note(&text, &line).map_err(|source| NoteError::Splice { path: self.path.clone(), source })?;
            if let Replaced::Written(_) =
                replace_unless_edited(&self.path, &snapshot, updated.as_bytes(), || {}).map_err(io)?
            {
                return Ok(line);
            }
        }
        Err(NoteError::Busy { path: self.path.clone() })
    }

    /// The file as text; a byte that is not UTF-8 refuses the write (never replaced).
    fn read(&self) -> Result<String, NoteError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| NoteError::NotText { path: self.path.clone() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(source) => Err(NoteError::Io { path: self.path.clone(), source }),
        }
    }
}

/// `note` on one line: line breaks and control characters become spaces, cut at
/// [`NOTE_CHARS`] characters.
fn one_line(note: &str) -> Result<String, NoteError> {
    let flat: String = note.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let words: Vec<&str> = flat.split_whitespace().collect();
    if words.is_empty() {
        return Err(NoteError::Empty);
    }
    Ok(words.join(" ").chars().take(NOTE_CHARS).collect())
}

/// `text` with `line` at the end of its notes section (made when missing).
fn with_note(text: &str, line: &str) -> Result<String, SpliceError> {
    let body = sections::find(text)
        .into_iter()
        .find(|s| s.title == SECTION)
        .and_then(|s| text.get(s.span))
        .and_then(|chunk| chunk.split_once('\n'))
        .map(|(_, body)| body.trim_end().to_owned())
        .unwrap_or_default();
    let body = if body.trim().is_empty() { line.to_owned() } else { format!("{body}\n{line}") };
    sections::splice(text, SECTION, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn notes(dir: &tempfile::TempDir) -> MemoryNotes {
        MemoryNotes { path: dir.path().join("MEMORY.md"), tz: chrono_tz::UTC }
    }

    #[test]
    fn notes_go_into_their_own_section_and_every_other_byte_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let user = "# Me\n\n## Proactivity preferences\n- never before 9\n\n```md\n## Notes from Raven\n```\n\n## Errands\n- [ ] taxes\n";
        std::fs::write(tmp.path().join("MEMORY.md"), user).unwrap();
        let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let n = notes(&tmp);
        assert_eq!(
            n.append("likes green tea\n## Proactivity preferences", at).unwrap(),
            "- 2026-03-02: likes green tea ## Proactivity preferences"
        );
        n.append("bike code 4711", at).unwrap();
        let after = std::fs::read_to_string(&n.path).unwrap();
        assert!(after.starts_with(user), "the user's text, fenced look-alike included, is kept: {after}");
        assert_eq!(
            &after[user.len()..],
            "\n## Notes from Raven\n- 2026-03-02: likes green tea ## Proactivity preferences\n- 2026-03-02: bike code 4711\n\n"
        );
        let prefs = |text: &str| sections::select(text, &["Proactivity preferences".into()]);
        assert_eq!(prefs(&after), prefs(user), "the preferences are untouched");
        assert!(prefs(user).contains("- never before 9"));
    }

    #[test]
    fn the_dates_of_kept_notes_are_no_deadlines() {
        let text = "# Me\n- [ ] taxes due 2026-03-03\n## Notes from Raven\n- 2026-03-02: code 4711\n## Errands\n- x\n";
        let memory: std::sync::Arc<str> = text.into();
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let due = crate::context::deadlines::parse_deadlines(
            &memory,
            now,
            chrono_tz::UTC,
            Default::default(),
            &Default::default(),
        );
        let titles: Vec<&str> = due.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(titles, ["taxes"], "the note's date is not a deadline");
    }

    #[test]
    fn an_empty_note_a_missing_file_and_a_file_that_is_not_text() {
        let tmp = tempfile::tempdir().unwrap();
        let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let n = notes(&tmp);
        assert!(matches!(n.append(" \n\t", at), Err(NoteError::Empty)));
        n.append("first", at).unwrap();
        assert_eq!(std::fs::read_to_string(&n.path).unwrap(), "## Notes from Raven\n- 2026-03-02: first\n\n");
        std::fs::write(&n.path, b"# Me\n\xff\n").unwrap();
        assert!(matches!(n.append("x", at), Err(NoteError::NotText { .. })));
        assert_eq!(std::fs::read(&n.path).unwrap(), b"# Me\n\xff\n", "never written over");
    }
}
