//! ContextAssembler: every field of the PlannerContext from its source (spec §3 table). Each
//! field is read on its own and degrades to its default when its source fails, so one
//! failing source never empties the others.

use super::attention::sections;
use super::behaviors::folded_tail;
use super::routines::{LearnConfig, RoutineStore};
use super::sessions::active_sessions;
use crate::config::ContextConfig;
use crate::data_dir::DataDir;
use crate::policy::SnapshotReply;
use crate::store::files;
use crate::supervise::{Request, Serve, Service};
use chrono::{DateTime, Duration, Utc};
use raven_proto::{CalendarEntry, PlannerContext, PlannerDecision};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A caller-injected calendar.
pub type CalendarFn = Box<dyn Fn(DateTime<Utc>) -> Result<Vec<CalendarEntry>, FieldError>>;

/// Why one field's source failed (the field then takes its default, and the tick goes on).
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    /// A file exists but cannot be read.
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// Learning the routines failed (history.md or routines.json).
    #[error(transparent)]
    Routines(#[from] super::routines::RoutineError),
    /// A caller's source (the calendar) failed, in its own words.
    #[error("{0}")]
    Source(String),
}

pub struct ContextAssembler {
    memory: PathBuf,
    history: PathBuf,
    sessions: PathBuf,
    attention: PathBuf,
    behaviors: PathBuf,
    cfg: ContextConfig,
    /// Learns routines from the new lines of history.md (`user_memory/routines.json`).
    routines: RoutineStore,
    /// The last routines learned, by the versions of history.md and routines.json and the
    /// local day (forgetting counts days): an unchanged pair is not learned from again.
    learned: Option<(LearnedKey, Vec<raven_proto::Routine>)>,
    calendar: Option<CalendarFn>,
    last_decision: Option<PlannerDecision>,
    /// The user's zone, named to the Planner.
    tz: chrono_tz::Tz,
    /// The selected sections of attention.md; dropped when the watcher reports a change.
    attention_cache: Option<String>,
    /// MEMORY.md as last read, by the version of the file: a tick does not read and decode a
    /// long memory again when it did not change.
    memory_cache: Option<(crate::store::Stamp, std::sync::Arc<str>)>,
}

type LearnedKey = (Option<crate::store::Stamp>, Option<crate::store::Stamp>, chrono::NaiveDate);

/// The fields that fell back to their defaults, with why.
pub type Degraded = Vec<(&'static str, String)>;

impl ContextAssembler {
    pub fn new(dir: &DataDir, cfg: ContextConfig) -> Self {
        ContextAssembler {
            routines: RoutineStore::new(dir.user_memory().join("routines.json")),
            learned: None,
            memory: dir.memory(),
            history: dir.history(),
            sessions: dir.sessions(),
            attention: dir.attention(),
            behaviors: dir.behaviors(),
            cfg,
            calendar: None,
            last_decision: None,
            tz: chrono_tz::Tz::UTC,
            attention_cache: None,
            memory_cache: None,
        }
    }

    /// The user's zone, which the Planner's context names (UTC until said).
    pub fn with_zone(mut self, tz: chrono_tz::Tz) -> Self {
        self.tz = tz;
        self
    }

    pub fn with_calendar(mut self, calendar: CalendarFn) -> Self {
        self.calendar = Some(calendar);
        self
    }

    /// The routines, learned again only when history.md or routines.json changed, or the day did.
    fn learn_routines(&mut self, now: DateTime<Utc>) -> Result<Vec<raven_proto::Routine>, FieldError> {
        use crate::store::Stamp;
        let key = (Stamp::of(&self.history), Stamp::of(self.routines.path()), now.with_timezone(&self.tz).date_naive());
        if let Some((k, routines)) = &self.learned {
            if *k == key {
                return Ok(routines.clone());
            }
        }
        let learn = LearnConfig { min_days: self.cfg.routine_min_days, forget_days: self.cfg.routine_forget_days };
        let routines = self.routines.learn(&self.history, self.tz, now, &learn)?;
        // Keyed by the versions after learning (learning may have written routines.json).
        let key = (Stamp::of(&self.history), Stamp::of(self.routines.path()), key.2);
        self.learned = Some((key, routines.clone()));
        Ok(routines)
    }

    pub fn remember_last_decision(&mut self, d: PlannerDecision) {
        self.last_decision = Some(d);
    }

    pub fn invalidate_attention(&mut self) {
        self.attention_cache = None;
    }

    /// MEMORY.md, read again only when its version changed.
    fn read_memory(&mut self) -> Result<std::sync::Arc<str>, FieldError> {
        let stamp = crate::store::Stamp::of(&self.memory);
        if let (Some(now), Some((seen, text))) = (stamp, &self.memory_cache) {
            if now == *seen {
                return Ok(text.clone());
            }
        }
        let text: std::sync::Arc<str> = read_optional(&self.memory)?.into();
        // A file changed within the stamp's resolution could change again unseen: kept only
        // once it is a moment old.
        self.memory_cache = stamp.filter(|s| s.age() > std::time::Duration::from_millis(50)).map(|s| (s, text.clone()));
        Ok(text)
    }

    pub fn assemble(&mut self, now: DateTime<Utc>, policy: Option<SnapshotReply>) -> (PlannerContext, Degraded) {
        let mut degraded = Degraded::new();
        let mut ctx = PlannerContext::empty(now);
        ctx.timezone = self.tz.name().to_owned();
        ctx.memory_md = field(&mut degraded, "memory_md", || self.read_memory());
        ctx.history_md_recent =
            field(&mut degraded, "history_md_recent", || tail(&self.history, self.cfg.history_tail_bytes));
        ctx.routines = field(&mut degraded, "routines", || self.learn_routines(now));
        let window = Duration::minutes(self.cfg.active_window_minutes);
        ctx.active_sessions = field(&mut degraded, "active_sessions", || {
            active_sessions(&self.sessions, now, window)
                .map_err(|source| FieldError::Read { path: self.sessions.clone(), source })
        });
        match policy {
            Some(p) => {
                ctx.nudge_policy_state = p.state;
                ctx.fire_history = p.fire_history;
            }
            None => degraded.push(("nudge_policy_state", "the policy did not answer".into())),
        }
        if let Some(cal) = &self.calendar {
            ctx.calendar = field(&mut degraded, "calendar", || cal(now));
        }
        ctx.last_decision = self.last_decision.clone();
        ctx.attention_md = match &self.attention_cache {
            Some(cached) => cached.clone(),
            None => {
                let titles = self.cfg.attention_sections.clone();
                let text = field(&mut degraded, "attention_md", || {
                    read_optional(&self.attention).map(|t| sections::select(&t, &titles))
                });
                self.attention_cache = Some(text.clone());
                text
            }
        };
        let n = self.cfg.behaviors_tail_events;
        ctx.behaviors_recent = field(&mut degraded, "behaviors_recent", || {
            read_optional(&self.behaviors).map(|t| folded_tail(whole_lines(&t), n))
        });
        for (name, why) in &degraded {
            tracing::warn!(field = name, "context source failed, using its default: {why}");
        }
        (ctx, degraded)
    }
}

/// One field: its value, or its default with the failure noted (a panic included).
fn field<T: Default>(degraded: &mut Degraded, name: &'static str, read: impl FnOnce() -> Result<T, FieldError>) -> T {
    match catch_unwind(AssertUnwindSafe(read)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            degraded.push((name, e.to_string()));
            T::default()
        }
        Err(_) => {
            degraded.push((name, "source panicked".into()));
            T::default()
        }
    }
}

/// Valid UTF-8 is taken as is (no copy of a 1 MB file); anything else is repaired.
/// The text up to its last line end: a line still being appended is left for the next read.
fn whole_lines(text: &str) -> &str {
    text.rfind('\n').map_or("", |i| &text[..=i])
}

/// A missing file is an empty source, not a failure.
fn read_optional(path: &Path) -> Result<String, FieldError> {
    files::read_optional(path)
        .map(Option::unwrap_or_default)
        .map_err(|source| FieldError::Read { path: path.to_owned(), source })
}

/// The last `max` bytes of a file, starting at a line boundary.
fn tail(path: &Path, max: usize) -> Result<String, FieldError> {
    files::tail(path, max as u64)
        .map(Option::unwrap_or_default)
        .map_err(|source| FieldError::Read { path: path.to_owned(), source })
}

/// The assembler as a supervised actor.
pub struct AssemblerService {
    assembler: ContextAssembler,
}

impl AssemblerService {
    pub fn new(assembler: ContextAssembler) -> Self {
        AssemblerService { assembler }
    }
}

impl Service for AssemblerService {
    fn name(&self) -> &'static str {
        "ContextAssembler"
    }

    fn restarting(&mut self) {
        self.assembler.invalidate_attention();
    }
}

/// Build the context for a tick; the runner hands over the policy's snapshot.
pub struct Assemble {
    pub now: DateTime<Utc>,
    pub policy: Option<SnapshotReply>,
}

impl Request for Assemble {
    type Reply = (PlannerContext, Degraded);
}

impl Serve<Assemble> for AssemblerService {
    fn serve(&mut self, m: Assemble) -> (PlannerContext, Degraded) {
        self.assembler.assemble(m.now, m.policy)
    }
}

pub struct RememberLastDecision(pub PlannerDecision);

impl Request for RememberLastDecision {
    type Reply = ();
}

impl Serve<RememberLastDecision> for AssemblerService {
    fn serve(&mut self, m: RememberLastDecision) {
        self.assembler.remember_last_decision(m.0);
    }
}

/// From the attention.md watcher (or the runner after its own write).
pub struct AttentionChanged;

impl Request for AttentionChanged {
    type Reply = ();
}

impl Serve<AttentionChanged> for AssemblerService {
    fn serve(&mut self, _: AttentionChanged) {
        self.assembler.invalidate_attention();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, DataDir) {
        let dir = tempfile::tempdir().unwrap();
        let d = DataDir::new(dir.path());
        d.ensure().unwrap();
        (dir, d)
    }

    #[test]
    fn every_field_comes_from_its_source() {
        let (_t, d) = setup();
        let now = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 3, 4, 12, 0, 0).unwrap();
        std::fs::write(d.memory(), "- [ ] taxes due: 2026-03-05\n").unwrap();
        std::fs::write(
            d.history(),
            "- 2026-03-01 09:00 medication\n- 2026-03-02 09:00 medication\n- 2026-03-03 09:00 medication\n",
        )
        .unwrap();
        std::fs::write(d.attention(), "## Routines\n- r\n\n## Private\nsecret\n").unwrap();
        std::fs::write(d.behaviors(), "- ran\n  far\n").unwrap();
        let line =
            serde_json::json!({"role": "user", "content": "hello", "at": (now - Duration::minutes(5)).to_rfc3339()});
        std::fs::write(d.sessions().join("cli_1.jsonl"), format!("{line}\n")).unwrap();
        let mut a = ContextAssembler::new(&d, ContextConfig::default()).with_calendar(Box::new(move |now| {
            Ok(vec![CalendarEntry {
                title: "dentist".into(),
                starts_at: now,
                ends_at: None,
                all_day: false,
                notice_minutes: None,
            }])
        }));
        a.remember_last_decision(PlannerDecision::skip("earlier"));
        let (ctx, degraded) = a.assemble(now, None);
        assert_eq!(degraded.len(), 1, "only the policy was missing: {degraded:?}");
        assert!(ctx.memory_md.contains("taxes"));
        assert_eq!(ctx.routines.len(), 1);
        assert_eq!(ctx.active_sessions[0].session_key, "cli:1");
        assert_eq!(ctx.active_sessions[0].last_user_message.as_deref(), Some("hello"));
        assert_eq!(ctx.attention_md, "## Routines\n- r", "only the selected sections");
        assert_eq!(ctx.behaviors_recent, "- ran far");
        assert_eq!(ctx.calendar[0].title, "dentist");
        assert_eq!(ctx.last_decision.unwrap().reason, "earlier");
    }

    #[test]
    fn a_failing_source_never_empties_the_others() {
        let (_t, d) = setup();
        std::fs::write(d.memory(), "remember this").unwrap();
        // history.md is a directory: reading it fails.
        std::fs::create_dir_all(d.history()).unwrap();
        let mut a =
            ContextAssembler::new(&d, ContextConfig::default()).with_calendar(Box::new(|_| panic!("calendar bug")));
        let (ctx, degraded) = a.assemble(Utc::now(), None);
        let names: Vec<_> = degraded.iter().map(|(n, _)| *n).collect();
        assert!(names.contains(&"history_md_recent") && names.contains(&"calendar"), "{names:?}");
        assert_eq!(&*ctx.memory_md, "remember this");
        assert!(ctx.calendar.is_empty());
    }

    #[test]
    fn attention_is_cached_until_a_change_is_reported() {
        let (_t, d) = setup();
        std::fs::write(d.attention(), "## Routines\nv1\n").unwrap();
        let mut a = ContextAssembler::new(&d, ContextConfig::default());
        assert!(a.assemble(Utc::now(), None).0.attention_md.contains("v1"));
        std::fs::write(d.attention(), "## Routines\nv2\n").unwrap();
        assert!(a.assemble(Utc::now(), None).0.attention_md.contains("v1"), "cached");
        a.invalidate_attention();
        assert!(a.assemble(Utc::now(), None).0.attention_md.contains("v2"));
    }

    #[test]
    fn the_history_tail_starts_at_a_line() {
        let (_t, d) = setup();
        let long: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(d.history(), &long).unwrap();
        let t = tail(&d.history(), 100).unwrap();
        assert!(t.len() <= 100 && t.starts_with("line ") && t.ends_with("line 999\n"), "{t:?}");
    }
}
