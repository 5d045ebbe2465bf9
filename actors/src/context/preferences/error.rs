//! What can go wrong reading the preferences: a MEMORY.md line not understood (a note; the
//! other lines still apply), or a source that cannot be used at all (the last overrides stay).

use std::path::PathBuf;

/// Why one `key: value` line of the MEMORY.md section was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not a `key: value` line")]
    NotKeyValue,
    #[error("unknown key `{0}`")]
    UnknownKey(String),
    #[error("`{0}` is not a whole number")]
    NotCount(String),
    #[error("`{0}` is not HH:MM")]
    NotTime(String),
    #[error("`{0}` is not a window HH:MM-HH:MM")]
    NotWindow(String),
    #[error("`{0}` is an empty window")]
    EmptyWindow(String),
    #[error("`{0}` is not a duration like 45m or 1h30m")]
    NotMinutes(String),
    #[error("`{0}` is not a day (mon ... sun)")]
    NotDay(String),
}

/// Why the preferences could not be read: the overrides last sent stay in force.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreferencesError {
    /// preferences.toml does not parse; `line` is where the parser stopped.
    #[error("preferences.toml{}: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Toml { line: Option<usize>, message: String },
    /// A source exists but cannot be read (kept as text so a standing error compares equal
    /// from one tick to the next and is reported once).
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
}
