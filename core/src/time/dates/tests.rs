//! The finder's rules, one test each, and the notes it must read whole.

use super::*;
use chrono::{NaiveDate, TimeZone};
use chrono_tz::America::New_York;
use chrono_tz::Europe::Berlin;

const MF: DateOrder = DateOrder::MonthFirst;
const DF: DateOrder = DateOrder::DayFirst;

/// Sunday, 10 May 2026, noon UTC.
fn now() -> DateTime<Utc> {
    utc(2026, 5, 10, 12, 0)
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

/// The instant of a local wall-clock time in `tz` (not in a gap).
fn local(tz: Tz, y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    tz.with_ymd_and_hms(y, mo, d, h, mi, 0).earliest().unwrap().with_timezone(&Utc)
}

/// The one date of a one-line note.
fn one(line: &str, tz: Tz, order: DateOrder) -> Option<FoundDate> {
    let found = find_dates(line, now(), tz, order);
    assert!(found.len() <= 1, "{line}: {found:?}");
    found.into_iter().next()
}

fn at(line: &str) -> Option<DateTime<Utc>> {
    one(line, Berlin, MF).map(|f| f.at)
}

const MEMORY: &str = "# Memory
Dentist on May 15 at 3pm
Zahnarzt am 20.05. um 15:00
1/2 cup of flour
Parents' evening 12 June
open 24/7
5/20 checkup for Mia
upgrade to v2.0.15
pay the nanny on the 20th of every month
- [ ] File the tax return due: 2026-05-31 17:00 !high
3/4 of the budget
- [x] Book flights due 2026-05-12
~~Call the plumber May 11~~
room 101
Friday, June 5 at 9am: school play
Send the report by May 29
call 555-1234
2 pills at night
";

/// (line, title, kind, done, local date and time; 23:59 when all day)
type Expected = (usize, &'static str, DateKind, bool, (i32, u32, u32, u32, u32));

const EXPECTED: [Expected; 10] = [
    (2, "Dentist", DateKind::Event, false, (2026, 5, 15, 15, 0)),
    (3, "Zahnarzt", DateKind::Event, false, (2026, 5, 20, 15, 0)),
    (5, "Parents' evening", DateKind::Event, false, (2026, 6, 12, 23, 59)),
    (7, "checkup for Mia", DateKind::Event, false, (2026, 5, 20, 23, 59)),
    (9, "pay the nanny", DateKind::Duty, false, (2026, 5, 20, 23, 59)),
    (10, "File the tax return", DateKind::Deadline, false, (2026, 5, 31, 17, 0)),
    (12, "Book flights", DateKind::Deadline, true, (2026, 5, 12, 23, 59)),
    (13, "Call the plumber", DateKind::Event, true, (2026, 5, 11, 23, 59)),
    (15, "school play", DateKind::Event, false, (2026, 6, 5, 9, 0)),
    (16, "Send the report", DateKind::Deadline, false, (2026, 5, 29, 23, 59)),
];

#[test]
fn a_memory_file_gives_exactly_its_ten_dated_lines_in_two_zones() {
    for tz in [Berlin, New_York] {
        let found = find_dates(MEMORY, now(), tz, MF);
        assert_eq!(found.len(), EXPECTED.len(), "{tz}: {found:#?}");
        for (f, (line, title, kind, done, (y, mo, d, h, mi))) in found.iter().zip(EXPECTED) {
            assert_eq!(f.line, line, "{f:?}");
            assert_eq!(f.title, title, "{f:?}");
            assert_eq!(f.kind, kind, "{f:?}");
            assert_eq!(f.done, done, "{f:?}");
            assert_eq!(f.at, local(tz, y, mo, d, h, mi), "{tz} {f:?}");
            assert_eq!(f.all_day, (h, mi) == (23, 59), "{f:?}");
            assert_eq!(f.recurrence.is_some(), kind == DateKind::Duty, "{f:?}");
        }
        assert_eq!(found[4].recurrence.as_deref(), Some("59 23 20 * *"));
        assert_eq!(found[5].importance, Importance::High);
        assert!(found.iter().filter(|f| f.line != 10).all(|f| f.importance == Importance::Medium));
    }
    let berlin = find_dates(MEMORY, now(), Berlin, MF);
    assert_eq!(berlin[0].at, utc(2026, 5, 15, 13, 0));
    let new_york = find_dates(MEMORY, now(), New_York, MF);
    assert_eq!(new_york[0].at, utc(2026, 5, 15, 19, 0));
    assert_eq!(new_york[2].at, utc(2026, 6, 13, 3, 59));
}

#[test]
fn a_date_without_a_year_is_the_next_within_12_months_unless_at_most_7_days_past() {
    assert_eq!(at("Pay May 10"), Some(local(Berlin, 2026, 5, 10, 23, 59)), "today");
    assert_eq!(at("Pay May 3"), Some(local(Berlin, 2026, 5, 3, 23, 59)), "7 days past: overdue");
    assert_eq!(at("Pay May 2"), Some(local(Berlin, 2027, 5, 2, 23, 59)), "8 days past: next year");
    assert_eq!(at("Pay Apr 1"), Some(local(Berlin, 2027, 4, 1, 23, 59)));
    assert_eq!(at("Pay Dec 31"), Some(local(Berlin, 2026, 12, 31, 23, 59)));
    assert_eq!(at("Leap party Feb 29"), None, "the next Feb 29 is more than 12 months ahead");
    let march_2027 = utc(2027, 3, 15, 12, 0);
    let leap = find_dates("Leap party Feb 29", march_2027, Berlin, MF);
    assert_eq!(leap[0].at, local(Berlin, 2028, 2, 29, 23, 59));
}

#[test]
fn a_date_without_a_time_is_due_at_the_end_of_its_local_day() {
    for (tz, expected) in [(Berlin, utc(2026, 6, 1, 21, 59)), (New_York, utc(2026, 6, 2, 3, 59))] {
        let found = one("Renew the lease 2026-06-01", tz, MF).unwrap();
        assert_eq!(found.at, expected, "{tz}");
        assert!(found.all_day);
        let timed = one("Renew the lease 2026-06-01 09:30", tz, MF).unwrap();
        assert_eq!(timed.at, local(tz, 2026, 6, 1, 9, 30));
        assert!(!timed.all_day);
    }
}

#[test]
fn numeric_dates_in_any_language_as_whole_words() {
    let zahnarzt = one("Zahnarzt am 15.05. um 15:00", Berlin, MF).unwrap();
    assert_eq!((zahnarzt.title.as_str(), zahnarzt.at), ("Zahnarzt", local(Berlin, 2026, 5, 15, 15, 0)));
    let reunion = one("Réunion le 2026-06-03 à 10h", Berlin, MF).unwrap();
    assert_eq!((reunion.title.as_str(), reunion.at), ("Réunion", local(Berlin, 2026, 6, 3, 10, 0)));
    assert_eq!(at("Abgabe (15.05.2026)"), Some(local(Berlin, 2026, 5, 15, 23, 59)));
    assert_eq!(at("Visa appointment 6/2/2027;"), Some(local(Berlin, 2027, 6, 2, 23, 59)));
    assert_eq!(at("Visa appointment 6/2/27"), Some(local(Berlin, 2027, 6, 2, 23, 59)));
    assert_eq!(at("Launch: 2026-05-15."), Some(local(Berlin, 2026, 5, 15, 23, 59)));
    for not_whole in ["see notes/2026-05-15.md", "https://example.com/2026/05/15/post", "id 2026-05-15x", "ref#5/20"] {
        assert_eq!(at(not_whole), None, "{not_whole}");
    }
}

#[test]
fn slash_and_dot_dates_without_a_year_need_evidence() {
    let accepted = [
        ("5/20 checkup for Mia", (5, 20, 23, 59)),
        ("Dentist 5/15 at 3pm", (5, 15, 15, 0)),
        ("Piano recital on 6/3", (6, 3, 23, 59)),
        ("Piano recital 6/3 at 6pm", (6, 3, 18, 0)),
        ("Piano recital 06/03", (6, 3, 23, 59)),
        ("Piano recital Wed 6/3", (6, 3, 23, 59)),
        ("Zahnarzt 15.05.", (5, 15, 23, 59)),
        ("Zahnarzt am 15.5.", (5, 15, 23, 59)),
        ("Zahnarzt 3.6. 14:00", (6, 3, 14, 0)),
    ];
    for (line, (mo, d, h, mi)) in accepted {
        assert_eq!(at(line), Some(local(Berlin, 2026, mo, d, h, mi)), "{line}");
    }
    let rejected = [
        "1/2 cup of flour",
        "3/4 of the budget",
        "open 24/7",
        "upgrade to v2.0.15",
        "5/16 inch bolts",
        "take 1/2 tablet",
        "cut costs by 1/2",
        "the average was 12.5.",
        "15.5 kg of rice",
        "room 101",
        "call 555-1234",
        "2 pills at night",
        "score 3-4",
    ];
    for line in rejected {
        for order in [MF, DF] {
            assert_eq!(one(line, Berlin, order), None, "{line} {order:?}");
        }
    }
}

#[test]
fn day_first_order_reads_slashes_day_first_and_dots_always() {
    let french = "Rendez-vous médecin le 20/5";
    assert_eq!(one(french, Berlin, MF), None, "month 20 does not exist");
    let found = one(french, Berlin, DF).unwrap();
    assert_eq!((found.title.as_str(), found.at), ("Rendez-vous médecin", local(Berlin, 2026, 5, 20, 23, 59)));
    assert_eq!(one("Dentist on 5/6", Berlin, MF).unwrap().at, local(Berlin, 2026, 5, 6, 23, 59));
    assert_eq!(one("Dentist on 5/6", Berlin, DF).unwrap().at, local(Berlin, 2026, 6, 5, 23, 59));
    assert_eq!(one("Dentist 5/6/2027", Berlin, DF).unwrap().at, local(Berlin, 2027, 6, 5, 23, 59));
    for order in [MF, DF] {
        assert_eq!(one("Zahnarzt 05.06.", Berlin, order).unwrap().at, local(Berlin, 2026, 6, 5, 23, 59));
    }
}

#[test]
fn month_name_dates_in_their_written_forms() {
    let cases = [
        ("Dentist May 15", (2026, 5, 15, 23, 59)),
        ("Dentist May 15th", (2026, 5, 15, 23, 59)),
        ("Dentist 15 May", (2026, 5, 15, 23, 59)),
        ("Dentist 15th of May", (2026, 5, 15, 23, 59)),
        ("Dentist on the 15th of May", (2026, 5, 15, 23, 59)),
        ("Dentist sept 3", (2026, 9, 3, 23, 59)),
        ("Dentist Sept. 3rd", (2026, 9, 3, 23, 59)),
        ("Dentist May 15, 2027", (2027, 5, 15, 23, 59)),
        ("Dentist 15 May 2027 at 3pm", (2027, 5, 15, 15, 0)),
        ("Dentist May 15 3pm", (2026, 5, 15, 15, 0)),
        ("Dentist May 15 at 3 pm", (2026, 5, 15, 15, 0)),
        ("Dentist May 15 15:00", (2026, 5, 15, 15, 0)),
        ("Dentist May 15 at 9", (2026, 5, 15, 9, 0)),
        ("Dentist at 9 on May 15", (2026, 5, 15, 9, 0)),
        ("Dentist 3:30pm May 15", (2026, 5, 15, 15, 30)),
        ("Dentist Friday, May 15 at noon", (2026, 5, 15, 12, 0)),
        ("Dentist on Fri May 15", (2026, 5, 15, 23, 59)),
        ("**Dentist** (May 15)", (2026, 5, 15, 23, 59)),
        ("Dentist May 15 from 3pm to 4pm", (2026, 5, 15, 15, 0)),
        ("Dentist 15.05. 15:00 - 16:00", (2026, 5, 15, 15, 0)),
    ];
    for (line, (y, mo, d, h, mi)) in cases {
        let found = one(line, Berlin, MF).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(found.at, local(Berlin, y, mo, d, h, mi), "{line}");
        assert_eq!(found.title.trim_matches('*'), "Dentist", "{line}");
        assert_eq!(found.kind, DateKind::Event, "{line}");
    }
    assert_eq!(at("chapter 3 may be late"), None, "lowercase `may` after a number is the verb");
    assert_eq!(at("Mayday 15 drill"), None);
    assert_eq!(at("3. May trip to the coast"), None, "a list number");
    assert_eq!(one("1. Dentist May 15", Berlin, MF).unwrap().title, "Dentist");
}

#[test]
fn impossible_mismatched_and_ambiguous_dates_are_left_alone() {
    for line in [
        "Quarter close 2/30",
        "Quarter close May 32",
        "Quarter close 2026-02-30",
        "Quarter close 31.04.",
        "Quarter close 2026-13-01",
        "Launch 10000-05-15",
        "Dentist Monday, June 5",
        "Trip May 5 back on May 12",
        "Dentist tomorrow at 3pm",
        "Dentist next Friday",
        "Yoga every other Monday until June 29",
        "Water the plants every 3 days, last May 8",
        "2026-05-15",
        "## May 15",
    ] {
        assert_eq!(one(line, Berlin, MF), None, "{line}");
    }
    let same_twice = one("Dentist May 15 (yes, May 15)", Berlin, MF).unwrap();
    assert_eq!(same_twice.title, "Dentist (yes)");
}

#[test]
fn kinds_follow_the_checkbox_the_key_words_and_recurrence() {
    let kind = |line: &str| one(line, Berlin, MF).map(|f| f.kind);
    for deadline in [
        "- [ ] Passport photos May 20",
        "* [ ] Passport photos May 20",
        "[ ] Passport photos May 20",
        "Passport photos due May 20",
        "Passport photos DUE: May 20",
        "Deadline: passport photos May 20",
        "Passport photos by May 20",
        "Passport photos by Wednesday, May 20",
    ] {
        assert_eq!(kind(deadline), Some(DateKind::Deadline), "{deadline}");
    }
    assert_eq!(kind("Dinner by the lake on May 20"), Some(DateKind::Event));
    assert_eq!(kind("Dinner May 20"), Some(DateKind::Event));
    assert_eq!(kind("Pay rent every month on the 1st"), Some(DateKind::Duty));
    let keyed = one("Report due May 29 (draft May 20)", Berlin, MF).unwrap();
    assert_eq!((keyed.title.as_str(), keyed.at), ("Report (draft May 20)", local(Berlin, 2026, 5, 29, 23, 59)));
}

#[test]
fn done_lines_are_listed_with_done() {
    let done = |line: &str| one(line, Berlin, MF).map(|f| (f.done, f.title));
    assert_eq!(done("- [x] Book flights May 20"), Some((true, "Book flights".into())));
    assert_eq!(done("- [X] Book flights May 20"), Some((true, "Book flights".into())));
    assert_eq!(done("~~Book flights May 20~~"), Some((true, "Book flights".into())));
    assert_eq!(done("- [ ] ~~Book flights May 20~~ !low"), Some((true, "Book flights".into())));
    assert_eq!(done("~~Book flights~~ May 20"), Some((true, "Book flights".into())));
    assert_eq!(done("~~Book~~ flights May 20"), Some((false, "~~Book~~ flights".into())));
    assert_eq!(done("- [x] ~~Book~~ flights May 20"), Some((true, "~~Book~~ flights".into())));
    assert_eq!(done("- [ ] Book flights May 20"), Some((false, "Book flights".into())));
}

/// The cases of the deadline reader this finder replaces.
#[test]
fn deadlines_parse_with_time_priority_and_done_marks() {
    let md = "# Notes
- [ ] Submit the tax return due: 2026-03-02 17:00 !high
- [ ] Renew passport (due 2026-04-01)
- [x] Book flights due 2026-02-20
no date here due soon
";
    let d = find_dates(md, utc(2026, 2, 1, 0, 0), Berlin, MF);
    assert_eq!(d.len(), 3);
    assert_eq!(d[0].title, "Submit the tax return");
    assert_eq!(d[0].importance, Importance::High);
    assert_eq!(d[0].at, utc(2026, 3, 2, 16, 0));
    assert_eq!(d[0].kind, DateKind::Deadline);
    assert!(!d[0].done && !d[0].all_day);
    assert_eq!(d[1].title, "Renew passport");
    assert_eq!(d[1].importance, Importance::Medium);
    assert_eq!(d[1].at, utc(2026, 4, 1, 21, 59));
    assert!(d[1].all_day);
    assert_eq!((d[2].title.as_str(), d[2].done, d[2].line), ("Book flights", true, 4));
    assert_eq!(one("Taxes due 2026-05-20 !LOW", Berlin, MF).unwrap().importance, Importance::Low);
    assert_eq!(one("Taxes due 2026-05-20 !medium", Berlin, MF).unwrap().importance, Importance::Medium);
}

#[test]
fn local_times_in_a_dst_gap_move_past_it_and_repeated_ones_take_the_earlier() {
    let gap = |line: &str, tz: Tz| find_dates(line, utc(2026, 3, 1, 0, 0), tz, MF)[0].at;
    assert_eq!(gap("Backup 2026-03-29 02:30", Berlin), utc(2026, 3, 29, 1, 0), "03:00 CEST");
    assert_eq!(gap("Backup 2026-03-08 02:30", New_York), utc(2026, 3, 8, 7, 0), "03:00 EDT");
    assert_eq!(gap("Backup 2026-10-25 02:30", Berlin), utc(2026, 10, 25, 0, 30), "02:30 CEST");
    assert_eq!(gap("Backup 2026-11-01 01:30", New_York), utc(2026, 11, 1, 5, 30), "01:30 EDT");
}

#[test]
fn recurring_lines_are_duties_with_their_cron_expression() {
    let cases = [
        ("pay the nanny on the 20th of every month", "pay the nanny", "59 23 20 * *"),
        ("pay the nanny the 20th of each month at 9am", "pay the nanny", "0 9 20 * *"),
        ("pay the nanny every month on the 20th", "pay the nanny", "59 23 20 * *"),
        ("Rent: every 1st of the month", "Rent", "59 23 1 * *"),
        ("Rent monthly on the 1st", "Rent", "59 23 1 * *"),
        ("Take out the bins every Monday", "Take out the bins", "59 23 * * 1"),
        ("Gym every Monday and Thursday at 7:30am", "Gym", "30 7 * * 1,4"),
        ("Gym every week on Sunday", "Gym", "59 23 * * 0"),
        ("at 6pm every Friday: call grandma", "call grandma", "0 18 * * 5"),
        ("Anniversary every year on June 12", "Anniversary", "59 23 12 6 *"),
        ("Water the plants every day at 8am", "Water the plants", "0 8 * * *"),
        ("Standup every weekday at 9:30", "Standup", "30 9 * * 1-5"),
    ];
    for (line, title, cron) in cases {
        let found = one(line, Berlin, MF).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(found.kind, DateKind::Duty, "{line}");
        assert_eq!(found.title, title, "{line}");
        assert_eq!(found.recurrence.as_deref(), Some(cron), "{line}");
    }
}

#[test]
fn a_duty_is_at_its_next_occurrence_from_a_week_ago() {
    let nanny = "pay the nanny on the 20th of every month";
    let on_the_25th = find_dates(nanny, utc(2026, 5, 25, 12, 0), Berlin, MF);
    assert_eq!(on_the_25th[0].at, local(Berlin, 2026, 5, 20, 23, 59), "5 days past: still due");
    assert!(on_the_25th[0].all_day);
    let on_the_28th = find_dates(nanny, utc(2026, 5, 28, 12, 0), Berlin, MF);
    assert_eq!(on_the_28th[0].at, local(Berlin, 2026, 6, 20, 23, 59));
    let monday = find_dates("Bins every Monday at 7am", now(), New_York, MF);
    assert_eq!(monday[0].at, local(New_York, 2026, 5, 4, 7, 0));
    assert!(!monday[0].all_day);
}

#[test]
fn the_occurrences_of_a_duty_within_a_window() {
    let from = utc(2026, 5, 1, 0, 0);
    let to = utc(2026, 7, 1, 0, 0);
    let nanny = one("pay the nanny on the 20th of every month", Berlin, MF).unwrap();
    assert_eq!(
        occurrences(&nanny, from, to, Berlin),
        vec![local(Berlin, 2026, 5, 20, 23, 59), local(Berlin, 2026, 6, 20, 23, 59)]
    );
    let gym = one("Gym every Monday at 7:30am", New_York, MF).unwrap();
    let mondays = occurrences(&gym, from, to, New_York);
    assert_eq!(mondays.len(), 9);
    assert_eq!(mondays[0], local(New_York, 2026, 5, 4, 7, 30));
    assert_eq!(mondays[8], local(New_York, 2026, 6, 29, 7, 30));
    let once = one("Dentist May 15 at 3pm", Berlin, MF).unwrap();
    assert_eq!(occurrences(&once, from, to, Berlin), vec![once.at]);
    assert!(occurrences(&once, to, utc(2026, 9, 1, 0, 0), Berlin).is_empty());
    assert!(occurrences(&nanny, to, from, Berlin).is_empty(), "an empty window");
}

#[test]
fn a_big_memory_is_read_line_by_line() {
    let mut text = String::new();
    for i in 0..20_000 {
        match i % 4 {
            0 => text.push_str("Plain prose about nothing in particular, written at some length to fill the line.\n"),
            1 => text.push_str("Ordered 3 boxes and 12 crates, invoice 4471, total 1/2 paid.\n"),
            2 => text.push_str("Standup May 20 at 9:30am with the whole team\n"),
            _ => text.push_str("- [ ] Renew the domain due: 2026-06-01 !low\n"),
        }
    }
    assert!(text.len() > 1_000_000);
    let found = find_dates(&text, now(), Berlin, MF);
    assert_eq!(found.len(), 10_000);
    assert_eq!((found[0].line, found[1].line), (3, 4));
}

#[test]
fn odd_lines_never_panic() {
    let pieces = "| |-|- [ ]|[x]|~~|~~~~|!high|due|due:|by|every|each|on the|of every month|May|may|0|00|32|31st|\
        99999|9999|10000-01-01|9999-12-31|0000-01-01|1/1|12/31/9999|29.02.|2/29|24/7|1/2|5/20|15.05.|at|at 9|25:00|\
        12am|noon|Friday,|Mon|every Sunday|every 31st of the month|(|)|é|日本|🙂|1.|1)|1.2.3.4|//|--|2026-05-|\
        -05-15|May 15,|15 May|the 0th|every 0th of the month|\t|\r";
    let mut lines = Vec::new();
    for a in pieces.split('|') {
        for b in ["", "May 15", "5/20", "every month on the 20th", "due 2026-02-30", "à 10h"] {
            lines.push(format!("{a} {b} {a}"));
            lines.push(format!("{b}{a}"));
        }
    }
    assert!(lines.len() > 300);
    let text = lines.join("\n");
    let edges = [
        utc(2026, 5, 10, 12, 0),
        Utc.with_ymd_and_hms(9999, 12, 31, 23, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(),
    ];
    for now in edges {
        for tz in [Berlin, New_York, chrono_tz::Pacific::Apia, chrono_tz::UTC] {
            for order in [MF, DF] {
                for found in find_dates(&text, now, tz, order) {
                    let _ = occurrences(&found, now, now + Duration::days(400), tz);
                }
            }
        }
    }
}

#[test]
fn years_beyond_9999_are_ignored() {
    let late = Utc.with_ymd_and_hms(9999, 12, 30, 12, 0, 0).unwrap();
    assert!(find_dates("New year Jan 5", late, Berlin, MF).is_empty());
    assert_eq!(
        find_dates("Last day 9999-12-31", late, chrono_tz::UTC, MF)[0].at.date_naive(),
        NaiveDate::from_ymd_opt(9999, 12, 31).unwrap()
    );
}

#[test]
fn a_text_read_earlier_the_same_day_gives_what_a_fresh_read_gives() {
    let text = "pay the nanny on the 20th of every month at 18:00\nDentist on May 3 at 3pm\n";
    let (morning, night) = (utc(2026, 1, 27, 8, 0), utc(2026, 1, 27, 19, 30));
    let fresh = {
        find_dates("something else 2026-01-01", night, Berlin, MF);
        find_dates(text, night, Berlin, MF)
    };
    find_dates("something else 2026-01-01", night, Berlin, MF);
    let early = find_dates(text, morning, Berlin, MF);
    assert_eq!(find_dates(text, night, Berlin, MF), fresh, "the duty is placed again for the later time");
    assert_ne!(early[0].at, fresh[0].at, "the duty's next occurrence moved during the day (Jan 20 → Feb 20)");
}
