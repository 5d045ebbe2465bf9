//! ProactivityPreferencesReader (spec §5 "Personalization"): the user's proactivity
//! preferences, re-read each tick so a preference the user states (or the agent writes
//! down) reaches the NudgePolicy gate on the next tick, with no restart.
//!
//! Two sources, both optional (a missing file sets nothing):
//!
//! - the `## Proactivity preferences` section of the workspace MEMORY.md, `key: value`
//!   lines in words (see [`memory_md`] for the keys and value forms);
//! - `user_memory/preferences.toml`, the fields of [`PolicyOverrides`] in TOML:
//!
//!   ```toml
//!   quiet_hours = { start = "22:00", end = "08:00" }
//!   max_per_day = 3
//!   max_per_weekend_day = 2
//!   max_per_hour = 1
//!   session_cooldown_minutes = 45
//!   dnd_windows = [{ name = "standup", start = "09:00", end = "09:30", weekdays = ["mon", "tue"] }]
//!   ```
//!
//! Precedence: a field set in both sources takes preferences.toml's value (the deliberate,
//! typed file beats prose), with a note when the two differ; do-not-disturb windows of
//! both sources all apply (each one only adds quiet time).
//!
//! The result is only a request: the policy passes it through
//! [`tighten`](crate::policy::overrides::tighten), which keeps what tightens the configured
//! policy and refuses, with a note, what would loosen it. The reader itself applies no such
//! rule.

mod error;
pub(crate) mod memory_md;
#[cfg(test)]
mod tests;

pub use error::{LineError, PreferencesError};
pub use memory_md::{parse_memory_md, SECTION};

use crate::data_dir::DataDir;
use crate::policy::PolicyOverrides;
use std::path::{Path, PathBuf};

/// What the sources ask for, and one note per line not understood or field overridden.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preferences {
    pub overrides: PolicyOverrides,
    pub notes: Vec<String>,
}

/// preferences.toml's overrides. A file that does not parse is an error naming the key: a
/// half-read typed file is not guessed at.
pub fn parse_toml(text: &str) -> Result<PolicyOverrides, PreferencesError> {
    toml::from_str(text).map_err(|e| PreferencesError::Toml {
        line: e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1),
        message: e.message().trim_end().to_owned(),
    })
}

/// `memory` with every field `toml` sets replaced by toml's, and both sources' windows.
pub fn merge(memory: PolicyOverrides, toml: PolicyOverrides, notes: &mut Vec<String>) -> PolicyOverrides {
    fn pick<T: PartialEq + std::fmt::Display>(
        name: &str,
        m: Option<T>,
        t: Option<T>,
        notes: &mut Vec<String>,
    ) -> Option<T> {
        match (m, t) {
            (Some(m), Some(t)) if m != t => {
                notes.push(format!("{name}: preferences.toml's {t} wins over MEMORY.md's {m}"));
                Some(t)
            }
            (m, t) => t.or(m),
        }
    }
    let mut dnd_windows = memory.dnd_windows;
    dnd_windows.extend(toml.dnd_windows);
    // Quiet windows of both sources all apply: each only adds quiet time.
    let mut quiet = memory.quiet_hours.into_iter().chain(memory.more_quiet_hours);
    let quiet_hours = toml.quiet_hours.or_else(|| quiet.next());
    let more_quiet_hours = quiet.chain(toml.more_quiet_hours).collect();
    PolicyOverrides {
        quiet_hours,
        more_quiet_hours,
        max_per_day: pick("max per day", memory.max_per_day, toml.max_per_day, notes),
        max_per_weekend_day: pick("max per weekend day", memory.max_per_weekend_day, toml.max_per_weekend_day, notes),
        max_per_hour: pick("max per hour", memory.max_per_hour, toml.max_per_hour, notes),
        session_cooldown_minutes: pick(
            "session cooldown minutes",
            memory.session_cooldown_minutes,
            toml.session_cooldown_minutes,
            notes,
        ),
        dnd_windows,
    }
}

/// Text in, overrides out: either source may be absent. Errs only when preferences.toml
/// does not parse.
pub fn parse(memory_md: Option<&str>, preferences_toml: Option<&str>) -> Result<Preferences, PreferencesError> {
    let (memory, mut notes) = memory_md.map(parse_memory_md).unwrap_or_default();
    let toml = preferences_toml.map(parse_toml).transpose()?.unwrap_or_default();
    let overrides = merge(memory, toml, &mut notes);
    Ok(Preferences { overrides, notes })
}

/// Reads both files (a missing one sets nothing) and [`parse`]s them. Errs when a file
/// exists but cannot be read, or preferences.toml does not parse.
pub fn read(memory_path: &Path, toml_path: &Path) -> Result<Preferences, PreferencesError> {
    let memory = read_optional(memory_path)?;
    let toml = read_optional(toml_path)?;
    parse(memory.as_deref(), toml.as_deref())
}

fn read_optional(path: &Path) -> Result<Option<String>, PreferencesError> {
    crate::store::files::read_optional(path)
        .map_err(|e| PreferencesError::Read { path: path.to_owned(), message: e.to_string() })
}

/// `user_memory/preferences.toml`.
pub fn toml_path(dir: &DataDir) -> PathBuf {
    dir.user_memory().join("preferences.toml")
}

/// Compare-and-skip over the overrides last handed to the policy: the policy starts with
/// none, so until a preference appears nothing is sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LastSent(PolicyOverrides);

impl LastSent {
    /// `Some(o)` to send with `SetOverrides` when `o` differs from the last one sent (and it
    /// becomes the last one sent); `None` when the policy already has it.
    pub fn changed(&mut self, o: PolicyOverrides) -> Option<PolicyOverrides> {
        (o != self.0).then(|| {
            self.0 = o.clone();
            o
        })
    }

    /// Forgets what was sent (say the policy restarted without its overrides): the next
    /// [`changed`](Self::changed) sends anything but no overrides.
    pub fn forget(&mut self) {
        self.0 = PolicyOverrides::default();
    }
}

/// One tick's result of [`ProactivityPreferencesReader::poll`]; each part is present only
/// when it changed since the previous poll, so a standing bad line is logged once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreferencesPoll {
    /// Send with `SetOverrides`; `None` when the policy already has these.
    pub send: Option<PolicyOverrides>,
    /// The notes to log (lines not understood, fields overridden), when they differ from
    /// the previous poll's.
    pub notes: Vec<String>,
    /// The sources could not be read; the overrides last sent stay in force.
    pub error: Option<PreferencesError>,
}

/// Re-reads the two sources each tick and says what to send and log.
#[derive(Debug, Clone)]
pub struct ProactivityPreferencesReader {
    memory_path: PathBuf,
    toml_path: PathBuf,
    sent: LastSent,
    last_notes: Vec<String>,
    last_error: Option<PreferencesError>,
    /// The last read, by the versions of the two files it read: an unchanged pair is not
    /// parsed again (MEMORY.md can be long, and this runs every tick).
    cached: Option<(Versions, Preferences)>,
}

type Versions = (Option<crate::store::Stamp>, Option<crate::store::Stamp>);

/// A file changed this recently may change again within its timestamp's resolution: not cached.
const RACY: std::time::Duration = std::time::Duration::from_millis(50);

impl ProactivityPreferencesReader {
    pub fn new(memory_path: impl Into<PathBuf>, toml_path: impl Into<PathBuf>) -> Self {
        ProactivityPreferencesReader {
            memory_path: memory_path.into(),
            toml_path: toml_path.into(),
            sent: LastSent::default(),
            last_notes: Vec::new(),
            last_error: None,
            cached: None,
        }
    }

    /// The workspace MEMORY.md and `user_memory/preferences.toml`.
    pub fn for_data_dir(dir: &DataDir) -> Self {
        Self::new(dir.memory(), toml_path(dir))
    }

    /// The two files' preferences, parsed again only when either file changed.
    fn read_cached(&mut self) -> Result<Preferences, PreferencesError> {
        use crate::store::Stamp;
        let versions = (Stamp::of(&self.memory_path), Stamp::of(&self.toml_path));
        if let Some((v, p)) = &self.cached {
            if *v == versions {
                return Ok(p.clone());
            }
        }
        let p = read(&self.memory_path, &self.toml_path)?;
        let settled = [versions.0, versions.1].iter().flatten().all(|s| s.age() > RACY);
        self.cached = settled.then(|| (versions, p.clone()));
        Ok(p)
    }

    pub fn poll(&mut self) -> PreferencesPoll {
        match self.read_cached() {
            Ok(p) => {
                self.last_error = None;
                let notes = if p.notes != self.last_notes { p.notes.clone() } else { Vec::new() };
                self.last_notes = p.notes;
                PreferencesPoll { send: self.sent.changed(p.overrides), notes, error: None }
            }
            Err(e) => {
                let error = (self.last_error.as_ref() != Some(&e)).then(|| e.clone());
                self.last_error = Some(e);
                PreferencesPoll { send: None, notes: Vec::new(), error }
            }
        }
    }

    /// The next poll sends the overrides even if unchanged.
    pub fn resend(&mut self) {
        self.sent.forget();
    }
}
