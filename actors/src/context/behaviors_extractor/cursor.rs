//! Where each session's extraction stopped, kept in `behaviors.cursor.json` beside
//! behaviors.md so a restart, or a peer process on the same data dir, never sends the same
//! messages to the model twice.
//!
//! A cursor is the number of messages of the session file already extracted plus the time
//! of the last of them. Session files only grow, so the count is exact; if the file was
//! rewritten (the message at the count no longer has that time), extraction resumes after
//! the first message later than the recorded time.

use super::error::ExtractError;
use super::events::BehaviorEvent;
use crate::store::{lock_path_for, write_atomic, FileLock};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// Messages of the session file already extracted.
    pub count: usize,
    /// The time of the last of them.
    pub last_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Cursors {
    /// By session key, `channel:chat_id`.
    pub sessions: BTreeMap<String, Cursor>,
}

/// `behaviors.md` → `behaviors.cursor.json`, in the same directory.
pub fn cursor_path(behaviors_md: &Path) -> PathBuf {
    behaviors_md.with_extension("cursor.json")
}

/// The index of the first message not yet extracted, of `times` (the session's messages'
/// times, in file order).
pub fn first_pending(times: &[DateTime<Utc>], cursor: Option<&Cursor>) -> usize {
    match cursor {
        None => 0,
        Some(c) if c.count > 0 && times.get(c.count - 1) == Some(&c.last_at) => c.count,
        Some(c) => times.iter().position(|t| *t > c.last_at).unwrap_or(times.len()),
    }
}

/// The stored cursors; a missing file is none. A file that does not parse is an error, not
/// an empty set: starting over would send every session to the model again and append
/// every event twice.
pub fn load(path: &Path) -> Result<Cursors, ExtractError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|source| ExtractError::Cursors { path: path.to_owned(), source })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Cursors::default()),
        Err(source) => Err(ExtractError::Io { path: path.to_owned(), source }),
    }
}

/// Appends `events` to behaviors.md and moves the session's cursor from `expected` to
/// `next`, under the lock on behaviors.md, only if the stored cursor is still `expected`
/// (a peer process may have extracted the same messages while the model was answering).
/// Returns the cursors now stored. The events land before the cursor moves: a crash in
/// between repeats an extraction rather than losing it.
pub fn commit(
    behaviors_md: &Path,
    session: &str,
    expected: Option<Cursor>,
    next: Cursor,
    events: &[BehaviorEvent],
) -> Result<Cursors, ExtractError> {
    let _lock = FileLock::exclusive(&lock_path_for(behaviors_md)).map_err(ExtractError::Lock)?;
    let path = cursor_path(behaviors_md);
    let mut cursors = load(&path)?;
    let stored = cursors.sessions.get(session).copied();
    if stored != expected {
        return Err(ExtractError::Raced(session.to_owned()));
    }
    if !events.is_empty() {
        append(behaviors_md, events).map_err(|source| ExtractError::Io { path: behaviors_md.to_owned(), source })?;
    }
    cursors.sessions.insert(session.to_owned(), next);
    let bytes = serde_json::to_vec_pretty(&cursors).map_err(ExtractError::Encode)?;
    write_atomic(&path, &bytes).map_err(|source| ExtractError::Io { path: path.clone(), source })?;
    Ok(cursors)
}

/// One line per event at the end of the file, appended (the file is never rewritten, so an
/// append costs what it adds); a missing or empty file starts with the `# Behaviors` heading.
/// A reader takes whole lines only (see the ContextAssembler), so a line being written is
/// never misread.
fn append(path: &Path, events: &[BehaviorEvent]) -> std::io::Result<()> {
    let mut f = crate::store::files::open_append(path)?;
    let mut text = String::new();
    if f.metadata()?.len() == 0 {
        text.push_str("# Behaviors\n\n");
    }
    for e in events {
        text.push_str(&e.line());
        text.push('\n');
    }
    crate::store::files::append_whole(&mut f, text.as_bytes())?;
    f.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(min: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 8, min, 0).unwrap()
    }

    #[test]
    fn the_cursor_resumes_after_the_extracted_messages_even_at_equal_times() {
        let times = [t(0), t(1), t(1), t(2)];
        assert_eq!(first_pending(&times, None), 0);
        assert_eq!(first_pending(&times, Some(&Cursor { count: 2, last_at: t(1) })), 2, "the second t(1) is new");
        // The file was rewritten: resume after the recorded time.
        assert_eq!(first_pending(&times[1..], Some(&Cursor { count: 2, last_at: t(1) })), 2);
        assert_eq!(first_pending(&times, Some(&Cursor { count: 9, last_at: t(5) })), 4);
    }

    #[test]
    fn a_commit_over_a_moved_cursor_appends_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("behaviors.md");
        let ev = BehaviorEvent { at: t(0).naive_utc(), kind: "habit".into(), summary: "s".into() };
        let first = Cursor { count: 1, last_at: t(0) };
        commit(&md, "cli:1", None, first, std::slice::from_ref(&ev)).unwrap();
        let err = commit(&md, "cli:1", None, Cursor { count: 2, last_at: t(1) }, &[ev]).unwrap_err().to_string();
        assert!(err.contains("another process"), "{err}");
        assert_eq!(std::fs::read_to_string(&md).unwrap(), "# Behaviors\n\n- 2026-03-02 08:00 [habit] s\n");
        assert_eq!(load(&cursor_path(&md)).unwrap().sessions["cli:1"], first);
    }

    #[test]
    fn an_unreadable_cursor_file_is_an_error_not_a_fresh_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("behaviors.cursor.json");
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("does not parse"));
    }
}
