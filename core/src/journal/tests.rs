use super::*;
use chrono::TimeZone;

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 2, 0).unwrap()
}

fn verdict(id: &str) -> Event {
    Event::Verdict(VerdictGiven {
        nudge_id: id.to_owned(),
        verdict: "accepted".to_owned(),
        topic: None,
        reason: None,
        job: None,
    })
}

#[test]
fn each_event_is_one_json_line_read_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::at(dir.path().join("journal.jsonl"));
    j.record(at(), Some("user"), verdict("n-1"));
    j.record(at(), None, Event::cron("job-1", &["cli:local".into()]));
    let lines = read_all(j.path().unwrap()).unwrap().unwrap();
    assert_eq!(lines.len(), 2);
    let first: Entry = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first.nudge_id(), Some("n-1"));
    assert_eq!(first.source.as_deref(), Some("user"));
    let raw: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(raw["kind"], "cron");
    assert_eq!(raw["at"], "2025-03-01T14:02:00Z");
}

#[test]
fn a_full_journal_is_rotated_before_the_next_append_and_an_older_one_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let j = Journal::bounded(path.clone(), 200);
    for i in 0..12 {
        j.record(at(), None, verdict(&format!("n-{i}")));
    }
    let (current, old) = (std::fs::metadata(&path).unwrap().len(), std::fs::metadata(rotated(&path)).unwrap().len());
    assert!(current < 200 + 100 && old < 200 + 100, "bounded: {current} + {old}");
    let lines = read_all(&path).unwrap().unwrap();
    assert!(lines.len() < 12, "the oldest lines went with the replaced file");
    assert!(lines.last().unwrap().contains("n-11"));
    assert!(lines.iter().all(|l| serde_json::from_str::<Entry>(l).is_ok()));
}

#[test]
fn a_failed_write_fails_nothing_and_a_missing_journal_reads_as_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    assert_eq!(read_all(&path).unwrap(), None);
    std::fs::create_dir(&path).unwrap();
    Journal::at(&path).record(at(), None, verdict("n-1"));
    Journal::off().record(at(), None, verdict("n-2"));
}

#[test]
fn a_follower_sees_appended_whole_lines_and_starts_over_after_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    std::fs::write(&path, "{\"old\":1}\n").unwrap();
    let mut r = JournalReader::from_end(&path);
    assert!(r.poll().unwrap().is_empty());
    let mut f = crate::store::files::open_append(&path).unwrap();
    std::io::Write::write_all(&mut f, b"{\"a\":1}\n{\"b\"").unwrap();
    assert_eq!(r.poll().unwrap(), vec!["{\"a\":1}"]);
    std::io::Write::write_all(&mut f, b":2}\n").unwrap();
    assert_eq!(r.poll().unwrap(), vec!["{\"b\":2}"]);
    std::fs::rename(&path, rotated(&path)).unwrap();
    std::fs::write(&path, "{\"c\":3}\n").unwrap();
    assert_eq!(r.poll().unwrap(), vec!["{\"c\":3}"]);
}
