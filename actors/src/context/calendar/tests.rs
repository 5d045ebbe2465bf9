//! Tests of the calendar module: reading one file's text here, the cached files in `sources`.

mod sources;

use crate::context::calendar::values::{parse_duration, Dur};
use crate::context::calendar::{parse_ics, CalendarError, CalendarEvent};
use chrono::{DateTime, Duration, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use std::path::Path;

const PARIS: Tz = chrono_tz::Europe::Paris;
const NEW_YORK: Tz = chrono_tz::America::New_York;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// `events` wrapped in a calendar, CRLF line ends as the RFC writes them.
fn ics(events: &str) -> String {
    let body = format!("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n{}END:VCALENDAR\n", events);
    body.replace('\n', "\r\n")
}

fn vevent(lines: &str) -> String {
    format!("BEGIN:VEVENT\nUID:u1\n{lines}END:VEVENT\n")
}

/// The events of `events` within 2026, in `tz`.
fn parse_in(tz: Tz, events: &str) -> Vec<CalendarEvent> {
    parse_ics(&ics(events), Path::new("cal.ics"), tz, utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)).unwrap()
}

fn parse(events: &str) -> Vec<CalendarEvent> {
    parse_in(PARIS, events)
}

fn starts(events: &[CalendarEvent]) -> Vec<DateTime<Utc>> {
    events.iter().map(|e| e.start).collect()
}

/// The line of a `Malformed` error.
fn malformed_line(text: &str) -> usize {
    match parse_ics(text, Path::new("bad.ics"), PARIS, utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)) {
        Err(CalendarError::Malformed { line, path, .. }) => {
            assert_eq!(path, Path::new("bad.ics"));
            line
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn a_z_time_is_utc() {
    let events = parse(&vevent("SUMMARY:Call\nDTSTART:20260310T140000Z\nDTEND:20260310T150000Z\n"));
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!((e.start, e.end), (utc(2026, 3, 10, 14, 0), Some(utc(2026, 3, 10, 15, 0))));
    assert_eq!((e.uid.as_str(), e.title.as_str(), e.all_day), ("u1", "Call", false));
    assert_eq!(e.source, Path::new("cal.ics"));
}

#[test]
fn a_tzid_time_is_in_that_zone_whatever_the_users_zone() {
    let text = vevent("DTSTART;TZID=Europe/Paris:20260310T090000\nDTEND;TZID=Europe/Paris:20260310T100000\n");
    let events = parse_in(NEW_YORK, &text);
    assert_eq!(events[0].start, utc(2026, 3, 10, 8, 0));
    assert_eq!(events[0].end, Some(utc(2026, 3, 10, 9, 0)));
    // A quoted id, and one at the end of a path as Thunderbird once wrote them.
    let quoted = parse_in(NEW_YORK, &vevent("DTSTART;TZID=\"/mozilla.org/20070129_1/Europe/Paris\":20260310T090000\n"));
    assert_eq!(quoted[0].start, utc(2026, 3, 10, 8, 0));
}

#[test]
fn an_unknown_tzid_and_a_floating_time_are_in_the_users_zone() {
    // New York is on EDT (UTC-4) from 2026-03-08.
    let unknown = parse_in(NEW_YORK, &vevent("DTSTART;TZID=W. Europe Standard Time:20260310T090000\n"));
    assert_eq!(unknown[0].start, utc(2026, 3, 10, 13, 0));
    let floating = parse_in(NEW_YORK, &vevent("DTSTART:20260310T090000\n"));
    assert_eq!(floating[0].start, utc(2026, 3, 10, 13, 0));
    assert_eq!(floating[0].end, None);
    assert_eq!(parse_in(PARIS, &vevent("DTSTART:20260310T090000\n"))[0].start, utc(2026, 3, 10, 8, 0));
}

#[test]
fn a_date_is_all_day_from_local_midnight() {
    let events = parse(&vevent("DTSTART;VALUE=DATE:20261224\nDTEND;VALUE=DATE:20261226\n"));
    let e = &events[0];
    assert!(e.all_day);
    assert_eq!(e.start, utc(2026, 12, 23, 23, 0));
    assert_eq!(e.end, Some(utc(2026, 12, 25, 23, 0)));
    // No end: one day.
    let one = parse_in(NEW_YORK, &vevent("DTSTART;VALUE=DATE:20261224\n"));
    assert_eq!((one[0].start, one[0].end), (utc(2026, 12, 24, 5, 0), Some(utc(2026, 12, 25, 5, 0))));
}

#[test]
fn a_weekly_rule_gives_the_occurrences_within_the_window_only() {
    let text = ics(&vevent("DTSTART:20260302T100000Z\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE\n"));
    let events = parse_ics(&text, Path::new("c.ics"), PARIS, utc(2026, 3, 3, 0, 0), utc(2026, 3, 12, 0, 0)).unwrap();
    let want = [utc(2026, 3, 4, 10, 0), utc(2026, 3, 9, 10, 0), utc(2026, 3, 11, 10, 0)];
    assert_eq!(starts(&events), want);
}

#[test]
fn count_and_until_end_a_rule() {
    let count = parse(&vevent("DTSTART:20260301T100000Z\nDTEND:20260301T110000Z\nRRULE:FREQ=DAILY;COUNT=5\n"));
    assert_eq!(count.len(), 5);
    assert_eq!(count[4].start, utc(2026, 3, 5, 10, 0));
    assert_eq!(count[4].end, Some(utc(2026, 3, 5, 11, 0)));
    let until = parse(&vevent("DTSTART:20260301T100000Z\nRRULE:FREQ=DAILY;UNTIL=20260304T100000Z\n"));
    assert_eq!(until.len(), 4, "UNTIL is inclusive");
    // A floating UNTIL is in the event's own zone.
    let zoned = parse_in(
        NEW_YORK,
        &vevent("DTSTART;TZID=Europe/Paris:20260301T090000\nRRULE:FREQ=DAILY;UNTIL=20260303T090000\n"),
    );
    assert_eq!(zoned.len(), 3);
    let all_day = parse(&vevent("DTSTART;VALUE=DATE:20260301\nRRULE:FREQ=DAILY;UNTIL=20260303\n"));
    assert_eq!(all_day.len(), 3);
    assert!(all_day.iter().all(|e| e.all_day && e.start.with_timezone(&PARIS).hour() == 0));
}

#[test]
fn a_rule_never_expands_without_bound() {
    let daily = parse_ics(
        &ics(&vevent("DTSTART:20000101T100000Z\nRRULE:FREQ=DAILY\n")),
        Path::new("c.ics"),
        PARIS,
        utc(2000, 1, 1, 0, 0),
        utc(2030, 1, 1, 0, 0),
    )
    .unwrap();
    assert_eq!(daily.len(), 1000);
    // Every second since 2000: stopped after a bounded number of steps, long before 2026.
    let secondly = parse(&vevent("DTSTART:20000101T000000Z\nRRULE:FREQ=SECONDLY\n"));
    assert!(secondly.is_empty());
}

#[test]
fn exdate_removes_occurrences_in_any_form() {
    let text = "DTSTART;TZID=Europe/Paris:20260302T090000\nRRULE:FREQ=WEEKLY;COUNT=4\n\
                EXDATE;TZID=Europe/Paris:20260309T090000\nEXDATE:20260316T080000Z\n";
    let events = parse_in(NEW_YORK, &vevent(text));
    assert_eq!(starts(&events), [utc(2026, 3, 2, 8, 0), utc(2026, 3, 23, 8, 0)]);
    let all_day = parse(&vevent("DTSTART;VALUE=DATE:20260301\nRRULE:FREQ=DAILY;COUNT=3\nEXDATE;VALUE=DATE:20260302\n"));
    assert_eq!(starts(&all_day), [utc(2026, 2, 28, 23, 0), utc(2026, 3, 2, 23, 0)]);
}

#[test]
fn rdate_adds_occurrences() {
    let events = parse(&vevent("DTSTART:20260301T100000Z\nRDATE:20260310T100000Z,20260320T100000Z\n"));
    assert_eq!(starts(&events), [utc(2026, 3, 1, 10, 0), utc(2026, 3, 10, 10, 0), utc(2026, 3, 20, 10, 0)]);
}

#[test]
fn a_weekly_event_keeps_its_wall_clock_time_across_dst() {
    let text = vevent("DTSTART;TZID=Europe/Paris:20261019T090000\nRRULE:FREQ=WEEKLY\n");
    let events = parse_ics(&ics(&text), Path::new("c.ics"), NEW_YORK, utc(2026, 10, 1, 0, 0), utc(2026, 11, 1, 0, 0));
    let events = events.unwrap();
    assert_eq!(starts(&events), [utc(2026, 10, 19, 7, 0), utc(2026, 10, 26, 8, 0)]);
    assert!(events.iter().all(|e| e.start.with_timezone(&PARIS).hour() == 9));
}

#[test]
fn an_override_moves_renames_or_cancels_its_occurrence() {
    let series = "BEGIN:VEVENT\nUID:s\nSUMMARY:Standup\nDTSTART:20260302T090000Z\nDTEND:20260302T091500Z\n\
                  RRULE:FREQ=DAILY;COUNT=3\nEND:VEVENT\n";
    let moved = "BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20260303T090000Z\nSUMMARY:Standup (late)\n\
                 DTSTART:20260303T140000Z\nEND:VEVENT\n";
    let cancelled = "BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20260304T090000Z\nSTATUS:CANCELLED\n\
                     DTSTART:20260304T090000Z\nEND:VEVENT\n";
    let events = parse(&format!("{moved}{series}{cancelled}"));
    let got: Vec<_> = events.iter().map(|e| (e.start, e.title.as_str(), e.end)).collect();
    assert_eq!(
        got,
        [
            (utc(2026, 3, 2, 9, 0), "Standup", Some(utc(2026, 3, 2, 9, 15))),
            (utc(2026, 3, 3, 14, 0), "Standup (late)", Some(utc(2026, 3, 3, 14, 15))),
        ]
    );
}

#[test]
fn a_cancelled_event_is_skipped() {
    let events = parse(&vevent("STATUS:CANCELLED\nDTSTART:20260310T140000Z\nRRULE:FREQ=DAILY;COUNT=3\n"));
    assert!(events.is_empty());
}

#[test]
fn notice_comes_from_the_first_alarm_that_rings_before_the_start() {
    let alarm = |trigger: &str| {
        let body = format!(
            "DTSTART:20260310T140000Z\nDTEND:20260310T150000Z\nBEGIN:VALARM\nACTION:DISPLAY\n{trigger}\nEND:VALARM\n"
        );
        parse(&vevent(&body)).remove(0).notice
    };
    assert_eq!(alarm("TRIGGER:-PT15M"), Some(Duration::minutes(15)));
    assert_eq!(alarm("TRIGGER;RELATED=START:-P1DT2H"), Some(Duration::hours(26)));
    assert_eq!(alarm("TRIGGER:PT0S"), Some(Duration::zero()));
    assert_eq!(alarm("TRIGGER:PT5M"), None, "after the start");
    assert_eq!(alarm("TRIGGER;RELATED=END:-PT2H"), Some(Duration::hours(1)));
    assert_eq!(alarm("TRIGGER;RELATED=END:-PT30M"), None, "after the start");
    assert_eq!(alarm("TRIGGER;VALUE=DATE-TIME:20260309T140000Z"), Some(Duration::days(1)));
    assert_eq!(alarm("TRIGGER;VALUE=DATE-TIME:20260310T143000Z"), None);
    let two = "TRIGGER:PT5M\nEND:VALARM\nBEGIN:VALARM\nTRIGGER:-PT10M";
    assert_eq!(alarm(two), Some(Duration::minutes(10)), "the first one that rings before");
}

#[test]
fn folded_lines_and_escaped_text_are_read_back() {
    let text =
        "SUMMARY:Lunch\\, then\n  a walk\\; bring\\nshoes \nLOCATION:Caf\n é Central\nDTSTART:20260310T120000Z\n";
    let e = parse(&vevent(text)).remove(0);
    assert_eq!(e.title, "Lunch, then a walk; bring\nshoes");
    assert_eq!(e.location.as_deref(), Some("Café Central"));
    let untitled = parse(&vevent("SUMMARY:  \nDTSTART:20260310T120000Z\n")).remove(0);
    assert_eq!((untitled.title.as_str(), untitled.location), ("(untitled event)", None));
}

#[test]
fn the_window_is_half_open_and_events_are_sorted_by_start_then_title() {
    let text = ics(&format!(
        "{}{}{}{}",
        vevent("SUMMARY:b\nDTSTART:20260310T100000Z\n"),
        vevent("SUMMARY:a\nDTSTART:20260310T100000Z\n"),
        vevent("SUMMARY:early\nDTSTART:20260310T090000Z\n"),
        vevent("SUMMARY:at the end\nDTSTART:20260310T110000Z\n"),
    ));
    let events = parse_ics(&text, Path::new("c.ics"), PARIS, utc(2026, 3, 10, 9, 0), utc(2026, 3, 10, 11, 0)).unwrap();
    let titles: Vec<_> = events.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles, ["early", "a", "b"]);
}

#[test]
fn a_file_that_is_not_a_calendar_is_malformed_at_line_1() {
    assert_eq!(malformed_line("hello world\n"), 1);
    assert_eq!(malformed_line(""), 1);
    assert_eq!(malformed_line("BEGIN:VCARD\r\nFN:Jo\r\nEND:VCARD\r\n"), 1);
}

#[test]
fn a_bad_event_makes_the_file_malformed_at_its_line() {
    // Line 5 is folded over two lines: the bad DTSTART of the second event is on line 10.
    let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:ok\r\nSUMMARY:a long\r\n  title\r\n\
                DTSTART:20260310T100000Z\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nDTSTART:2026-03-10 10:00\r\n\
                END:VEVENT\r\nEND:VCALENDAR\r\n";
    assert_eq!(malformed_line(text), 10);
    let no_start = ics(&vevent("SUMMARY:x\n"));
    assert_eq!(malformed_line(&no_start), 4, "the BEGIN:VEVENT line");
    let bad_rule = ics(&vevent("DTSTART:20260310T100000Z\nRRULE:FREQ=SOMETIMES\n"));
    assert_eq!(malformed_line(&bad_rule), 7);
    let bad_alarm = ics(&vevent("DTSTART:20260310T100000Z\nBEGIN:VALARM\nTRIGGER:soon\nEND:VALARM\n"));
    assert_eq!(malformed_line(&bad_alarm), 8);
}

#[test]
fn a_broken_structure_is_malformed_at_its_line() {
    assert_eq!(malformed_line(&ics(&vevent("DTSTART:20260310T100000Z\nno colon here\n"))), 7);
    assert_eq!(malformed_line(&ics("BEGIN:VEVENT\nUID:x\nEND:VTODO\n")), 6);
    assert_eq!(malformed_line("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260310T100000Z\nEND:VEVENT\n"), 1);
}

#[test]
fn durations_are_read_with_their_sign() {
    assert_eq!(parse_duration("-PT15M"), Some(Dur { days: 0, seconds: -900 }));
    assert_eq!(parse_duration("P1W"), Some(Dur { days: 7, seconds: 0 }));
    assert_eq!(parse_duration("+P1DT2H3S"), Some(Dur { days: 1, seconds: 7203 }));
    assert_eq!(parse_duration("P2D").map(Dur::exact), Some(Duration::days(2)));
    for bad in ["", "P", "PT", "15M", "PT15", "P1H", "PT1D", "-PT-1M"] {
        assert_eq!(parse_duration(bad), None, "{bad:?}");
    }
    let day = parse(&vevent("DTSTART:20260310T100000Z\nDURATION:PT1H30M\n")).remove(0);
    assert_eq!(day.end, Some(utc(2026, 3, 10, 11, 30)));
}
