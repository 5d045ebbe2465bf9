//! RoutineStore against real files: thresholds, incremental reads, rotation, forgetting,
//! concurrent learners and a corrupt file.

use super::*;
use crate::context::routines::HistoryWriter;
use chrono::TimeZone;
use std::sync::{Arc, Barrier};

fn tz() -> Tz {
    chrono_tz::Europe::Berlin
}

/// `h:mi` Berlin time on day `d` of March 2026.
fn march(d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    tz().with_ymd_and_hms(2026, 3, d, h, mi, 0).unwrap().with_timezone(&Utc)
}

const CFG: LearnConfig = LearnConfig { min_days: 3, forget_days: 30 };

struct Fixture {
    _dir: tempfile::TempDir,
    history: PathBuf,
    store: RoutineStore,
    writer: HistoryWriter,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("workspace/history.md");
    let store = RoutineStore::new(dir.path().join("user_memory/routines.json"));
    let writer = HistoryWriter::new(&history, 90);
    Fixture { _dir: dir, history, store, writer }
}

impl Fixture {
    fn say(&self, text: &str, at: DateTime<Utc>) {
        assert!(self.writer.record(text, at, tz()).unwrap());
    }

    fn learn(&self, now: DateTime<Utc>) -> Vec<Routine> {
        self.store.learn(&self.history, tz(), now, &CFG).unwrap()
    }

    /// The days of March on which `topic` was seen at 09:xx.
    fn days_of(&self, topic: &str) -> Vec<u32> {
        let e = self.store.evidence().unwrap();
        e.iter()
            .filter(|e| e.topic == topic && e.hour == 9)
            .flat_map(|e| e.days.iter().map(chrono::Datelike::day))
            .collect()
    }

    fn revision(&self) -> Option<u64> {
        FileLock::exclusive(&lock_path_for(self.store.path())).unwrap().revision()
    }
}

fn medication(days: u32) -> Vec<Routine> {
    vec![Routine { topic: "medication".into(), hour: 9, days_seen: days, days: Default::default() }]
}

#[test]
fn a_routine_appears_on_the_third_distinct_day_at_the_same_hour_and_not_before() {
    let f = fixture();
    f.say("took my medication", march(1, 9, 5));
    assert_eq!(f.learn(march(1, 12, 0)), vec![]);
    f.say("medication again, same day", march(1, 9, 50));
    f.say("medication at another hour", march(2, 10, 0));
    assert_eq!(f.learn(march(2, 12, 0)), vec![]);
    f.say("medication done", march(2, 9, 40));
    f.say("lunch with Sam", march(2, 14, 0));
    assert_eq!(f.learn(march(2, 15, 0)), vec![]);
    f.say("medication taken", march(3, 9, 10));
    assert_eq!(f.learn(march(3, 12, 0)), medication(3));
    assert_eq!(f.days_of("medication"), [1, 2, 3]);
}

#[test]
fn learning_reads_only_the_lines_added_since_the_last_learn() {
    let f = fixture();
    std::fs::create_dir_all(f.history.parent().unwrap()).unwrap();
    std::fs::write(&f.history, "# History\n").unwrap();
    for d in 1..=5 {
        f.say("medication", march(d, 9, 0));
    }
    for d in 1..=8 {
        f.say("walked the dog", march(d, 18, 0));
    }
    let dog = Routine { topic: "walked".into(), hour: 18, days_seen: 8, days: Default::default() };
    assert_eq!(f.learn(march(8, 20, 0)), [medication(5), vec![dog.clone()]].concat());
    // An edit in the middle (same length) is past the cursor: a re-read from the start
    // would find `meditation`.
    let text = std::fs::read_to_string(&f.history).unwrap();
    let edited = text.replacen("2026-03-02 09:00 medication", "2026-03-02 09:00 meditation", 1);
    assert_ne!(edited, text);
    std::fs::write(&f.history, edited).unwrap();
    f.say("medication", march(9, 9, 0));
    assert_eq!(f.learn(march(9, 20, 0)), [medication(6), vec![dog]].concat());
    assert_eq!(f.days_of("medication"), [1, 2, 3, 4, 5, 9]);
    assert!(f.days_of("meditation").is_empty());
}

#[test]
fn learning_with_nothing_new_does_not_rewrite_the_file() {
    let f = fixture();
    for d in 1..=3 {
        f.say("medication", march(d, 9, 0));
    }
    assert_eq!(f.learn(march(3, 12, 0)), medication(3));
    let (rev, bytes) = (f.revision(), std::fs::read(f.store.path()).unwrap());
    let mtime = std::fs::metadata(f.store.path()).unwrap().modified().unwrap();
    assert_eq!(f.learn(march(3, 13, 0)), medication(3));
    assert_eq!(f.learn(march(4, 8, 0)), medication(3));
    assert_eq!(f.revision(), rev);
    assert_eq!(std::fs::read(f.store.path()).unwrap(), bytes);
    assert_eq!(std::fs::metadata(f.store.path()).unwrap().modified().unwrap(), mtime);
    // Something new is saved, once.
    f.say("medication", march(4, 9, 0));
    assert_eq!(f.learn(march(4, 12, 0)), medication(4));
    assert_eq!(f.revision(), rev.map(|r| r + 1));
}

#[test]
fn the_file_is_versioned_readable_json() {
    let f = fixture();
    f.say("medication", march(1, 9, 0));
    f.learn(march(1, 12, 0));
    let text = std::fs::read_to_string(f.store.path()).unwrap();
    assert!(text.contains("\n  \"version\": 1,"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["cursor"]["offset"], std::fs::metadata(&f.history).unwrap().len());
    let r = &v["routines"][0];
    assert_eq!((r["topic"].as_str(), r["hour"].as_u64()), (Some("medication"), Some(9)));
    assert_eq!((r["first_seen"].as_str(), r["last_seen"].as_str()), (Some("2026-03-01"), Some("2026-03-01")));
    assert_eq!(r["days"], serde_json::json!(["2026-03-01"]));
}

#[test]
fn a_rotated_history_is_read_again_without_counting_a_day_twice() {
    let f = fixture();
    let header = "# History\n";
    let line = |d: u32| format!("2026-03-{d:02} 09:00 medication\n");
    let old: String = std::iter::once(header.to_owned()).chain((1..=3).map(line)).collect();
    std::fs::create_dir_all(f.history.parent().unwrap()).unwrap();
    std::fs::write(&f.history, &old).unwrap();
    assert_eq!(f.learn(march(3, 12, 0)), medication(3));
    // Rotated: day 1 dropped, the header kept (same first line), then days 4 to 6 appended,
    // so the file is longer than the old offset.
    let rotated: String = std::iter::once(header.to_owned()).chain((2..=6).map(line)).collect();
    assert!(rotated.len() > old.len());
    write_atomic(&f.history, rotated.as_bytes()).unwrap();
    assert_eq!(f.learn(march(6, 12, 0)), medication(6));
    assert_eq!(f.days_of("medication"), [1, 2, 3, 4, 5, 6]);
    // And incremental again from there.
    f.say("medication", march(7, 9, 0));
    assert_eq!(f.learn(march(7, 12, 0)), medication(7));
}

#[test]
fn a_routine_unseen_for_forget_days_is_dropped() {
    let f = fixture();
    for d in 1..=3 {
        f.say("medication", march(d, 9, 0));
    }
    let cfg = LearnConfig { min_days: 3, forget_days: 10 };
    let learn = |now| f.store.learn(&f.history, tz(), now, &cfg).unwrap();
    assert_eq!(learn(march(12, 23, 0)), medication(3));
    assert_eq!(f.store.evidence().unwrap().len(), 1);
    assert_eq!(learn(march(13, 0, 30)), vec![]);
    assert!(f.store.evidence().unwrap().is_empty());
    // Seen again: learned again from the new day on.
    f.say("medication", march(14, 9, 0));
    learn(march(14, 12, 0));
    assert_eq!(f.days_of("medication"), [14]);
}

#[test]
fn a_missing_history_has_nothing_new_and_writes_nothing() {
    let f = fixture();
    assert_eq!(f.learn(march(1, 12, 0)), vec![]);
    assert!(!f.store.path().exists());
}

#[test]
fn concurrent_learners_do_not_lose_evidence() {
    // Two stores on one file, each learning its own history at the same moment: without the
    // lock, both read the old file and the later save drops the other's evidence. (One wait
    // on the barrier per thread, so a failing learn fails the test instead of hanging it.)
    let dir = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let store = dir.path().join(format!("routines-{round}.json"));
        let barrier = Arc::new(Barrier::new(2));
        let threads: Vec<_> = [("medication", 9), ("running", 18)]
            .into_iter()
            .map(|(topic, hour)| {
                let writer = HistoryWriter::new(dir.path().join(format!("{topic}-{round}.md")), 90);
                for d in 1..=5 {
                    writer.record(topic, march(d, hour, 0), tz()).unwrap();
                }
                let (store, barrier) = (RoutineStore::new(&store), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    store.learn(writer.path(), tz(), march(5, 23, 0), &CFG)
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let e = RoutineStore::new(&store).evidence().unwrap();
        let seen: Vec<_> = e.iter().map(|e| (e.topic.as_str(), e.hour, e.days_seen())).collect();
        assert_eq!(seen, [("medication", 9, 5), ("running", 18, 5)], "round {round}");
    }
}

#[test]
fn a_corrupt_file_is_kept_aside_and_learning_starts_empty() {
    let f = fixture();
    let dir = f.store.path().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(f.store.path(), "{\"version\": 1, \"routines\": [").unwrap();
    f.say("medication", march(1, 9, 0));
    f.learn(march(1, 12, 0));
    let asides: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("routines.json.corrupt-"))
        .collect();
    assert_eq!(asides.len(), 1, "{asides:?}");
    assert!(asides[0]["routines.json.corrupt-".len()..].parse::<i64>().is_ok(), "{asides:?}");
    assert_eq!(std::fs::read_to_string(dir.join(&asides[0])).unwrap(), "{\"version\": 1, \"routines\": [");
    assert_eq!(f.days_of("medication"), [1]);
    // An impossible hour is corrupt too.
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(f.store.path()).unwrap()).unwrap();
    v["routines"][0]["hour"] = 24.into();
    std::fs::write(f.store.path(), v.to_string()).unwrap();
    assert!(f.store.evidence().unwrap().is_empty());
    assert!(!f.store.path().exists());
}

#[test]
fn a_newer_format_is_left_alone_and_reported() {
    let f = fixture();
    std::fs::create_dir_all(f.store.path().parent().unwrap()).unwrap();
    let newer = "{\"version\": 2, \"something\": \"else\"}";
    std::fs::write(f.store.path(), newer).unwrap();
    f.say("medication", march(1, 9, 0));
    let err = f.store.learn(&f.history, tz(), march(1, 12, 0), &CFG).unwrap_err();
    assert!(matches!(err, RoutineError::Version { found: 2, .. }), "{err}");
    assert_eq!(std::fs::read_to_string(f.store.path()).unwrap(), newer);
}
