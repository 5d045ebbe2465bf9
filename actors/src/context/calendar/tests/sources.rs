//! Tests of the cached files: missing, malformed and good files side by side, re-reading on
//! change and only then.

use super::{ics, utc, vevent, PARIS};
use crate::context::calendar::{CalendarError, CalendarSources};
use std::path::{Path, PathBuf};

fn write(path: &Path, text: &str, mtime: i64) {
    std::fs::write(path, text).unwrap();
    filetime::set_file_mtime(path, filetime::FileTime::from_unix_time(mtime, 0)).unwrap();
}

fn titles(sources: &mut CalendarSources) -> (Vec<String>, Vec<CalendarError>) {
    let (events, errors) = sources.events(PARIS, utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0));
    (events.into_iter().map(|e| e.title).collect(), errors)
}

#[test]
fn good_events_come_with_the_errors_of_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad, missing): (PathBuf, PathBuf, PathBuf) =
        (dir.path().join("good.ics"), dir.path().join("bad.ics"), dir.path().join("missing.ics"));
    write(&good, &ics(&vevent("SUMMARY:Dentist\nDTSTART:20260310T140000Z\n")), 1_000);
    write(&bad, "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:tomorrow\nEND:VEVENT\nEND:VCALENDAR\n", 1_000);
    let mut sources = CalendarSources::new(vec![missing, bad.clone(), good.clone()]);

    let (got, errors) = titles(&mut sources);
    assert_eq!(got, ["Dentist"]);
    assert_eq!(errors.len(), 1);
    match &errors[0] {
        CalendarError::Malformed { path, line, .. } => assert_eq!((path, *line), (&bad, 3)),
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert_eq!(sources.parses, 2);

    // Unchanged: nothing is read again, and the error is still reported.
    let (got, errors) = titles(&mut sources);
    assert_eq!((got.len(), errors.len(), sources.parses), (1, 1, 2));

    // Rewritten with the same length and a newer mtime: read again.
    write(&bad, "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:nextweek\nEND:VEVENT\nEND:VCALENDAR\n", 2_000);
    assert_eq!(titles(&mut sources).1.len(), 1, "still bad");
    assert_eq!(sources.parses, 3);
    write(&bad, &ics(&vevent("SUMMARY:Bank\nDTSTART:20260309T100000Z\n")), 2_000);
    let (got, errors) = titles(&mut sources);
    assert_eq!((got, errors.len(), sources.parses), (vec!["Bank".to_owned(), "Dentist".to_owned()], 0, 4));
}

#[test]
fn a_file_that_turns_malformed_gives_nothing_until_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cal.ics");
    write(&path, &ics(&vevent("SUMMARY:Dentist\nDTSTART:20260310T140000Z\n")), 1_000);
    let mut sources = CalendarSources::new(vec![path.clone()]);
    assert_eq!(titles(&mut sources).0, ["Dentist"]);

    write(&path, "not a calendar", 1_000);
    let (got, errors) = titles(&mut sources);
    assert!(got.is_empty(), "no stale events: {got:?}");
    assert!(matches!(&errors[..], [CalendarError::Malformed { line: 1, .. }]));

    std::fs::remove_file(&path).unwrap();
    let (got, errors) = titles(&mut sources);
    assert!(got.is_empty() && errors.is_empty(), "a missing file is empty, not an error");
    assert_eq!(sources.parses, 2);
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where a file is expected: its metadata reads, the file does not.
    let mut sources = CalendarSources::new(vec![dir.path().to_path_buf()]);
    let (got, errors) = titles(&mut sources);
    assert!(got.is_empty());
    assert!(matches!(&errors[..], [CalendarError::Io { path, .. }] if path == dir.path()), "{errors:?}");
}
