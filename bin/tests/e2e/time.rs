//! Time as the user has it, through the real binary: the zone resolved from `TZ`, and the
//! README's quick demo reminding on the terminal in zones far from UTC.

use crate::support;

use chrono::{Duration, Utc};
use std::path::Path;
use std::process::{Command, Output};

fn raven_in(zone: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("RAVEN_HOME")
        .env("TZ", zone)
        .output()
        .expect("run raven")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn config_show_names_the_zone_from_tz_and_an_invalid_tz_falls_back_to_utc_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let out = raven_in("Asia/Tokyo", tmp.path(), &["config", "show"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let zone = stdout.lines().find(|l| l.starts_with("# zone:")).unwrap_or_default();
    assert!(zone.contains("Asia/Tokyo") && zone.contains("TZ"), "{stdout}");
    let key = stdout.lines().find(|l| l.starts_with("general.timezone")).unwrap_or_default();
    assert!(key.contains("\"Asia/Tokyo\"") && key.contains("TZ"), "{key}");

    let out = raven_in("Mars/Olympus_Mons", tmp.path(), &["config", "show"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("# zone:     UTC"), "{}", text(&out.stdout));
    let warning = text(&out.stderr);
    assert!(warning.contains("warning") && warning.contains("Mars/Olympus_Mons"), "{warning}");

    // The file's word wins over TZ.
    std::fs::write(tmp.path().join("config.toml"), "[general]\ntimezone = \"Europe/Berlin\"\n").unwrap();
    let out = raven_in("Asia/Tokyo", tmp.path(), &["config", "show"]);
    assert!(text(&out.stdout).contains("# zone:     Europe/Berlin (from general.timezone in"), "{}", text(&out.stdout));
}

/// A client whose `TZ` differs from the running supervisor's zone is told which zone its
/// times are in, and how to name one for both; with the same zone it is told nothing.
#[test]
fn a_client_in_another_zone_than_the_supervisor_is_told_which_zone_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, "", &[("TZ", "America/New_York")]));
    support::wait_ready(dir);
    let out = raven_in("Asia/Tokyo", dir, &["cron", "add", "--at", "tomorrow at 9", "tea"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("times are in America/New_York (the running supervisor's zone), not in Asia/Tokyo (your TZ)")
            && said.contains("general.timezone"),
        "{said}"
    );
    assert!(text(&out.stdout).contains("09:00"), "read in the supervisor's zone: {}", text(&out.stdout));
    let same = raven_in("America/New_York", dir, &["cron", "list"]);
    assert!(!text(&same.stderr).contains("times are in"), "{}", text(&same.stderr));
}

/// The README's demo: a deadline half an hour ahead, written in the user's own local time,
/// then `raven tick`. Quiet hours are moved away from now (the demo may run at any hour), so
/// only the zone decides whether the deadline is seen as imminent.
fn quick_demo_reminds(zone: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    let now = Utc::now().with_timezone(&tz);
    let due = now + Duration::minutes(30);
    let (q0, q1) = (now + Duration::hours(3), now + Duration::hours(4));
    let quiet = format!("[policy.quiet_hours]\nstart = \"{}\"\nend = \"{}\"\n", q0.format("%H:%M"), q1.format("%H:%M"));
    support::write_config(dir, &quiet);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let line = format!("- [ ] Call the bank due: {}\n", due.format("%Y-%m-%d %H:%M"));
    std::fs::write(dir.join("workspace/MEMORY.md"), line).unwrap();
    let out = raven_in(zone, dir, &["tick"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{zone}: {}", text(&out.stderr));
    // The marker carries the nudge's short id (what `/ok`, `/stop` and `raven feedback` take).
    // Half an hour before local midnight, the deadline is tomorrow's.
    let day = if due.date_naive() == now.date_naive() { "" } else { "tomorrow " };
    let expected = format!("] Reminder: Call the bank is due {day}at {}.", due.format("%H:%M"));
    let line = stdout.lines().find(|l| l.contains(&expected)).unwrap_or_else(|| panic!("{zone}: {stdout}"));
    assert!(line.starts_with("[raven ⏰ ") && line.find(']') == Some("[raven ⏰ ".len() + 6), "{zone}: {line}");
}

#[test]
fn the_quick_demo_reminds_on_the_terminal_in_tokyo() {
    quick_demo_reminds("Asia/Tokyo");
}

#[test]
fn the_quick_demo_reminds_on_the_terminal_in_new_york() {
    quick_demo_reminds("America/New_York");
}

/// Ten dated lines in plain forms (prose, a numeric date inside German and French, a date
/// without a year, a recurring line, one done) among six lines whose numbers are not dates.
const NOTES: &str = "# Notes
Dentist on May 3 at 3pm
Zahnarzt für Mia am 05.05. um 10:00
5/14 checkup for Mia
- [ ] Submit the tax return due: 2027-05-10 17:00 !high
pay the nanny on the 20th of every month
- [x] Book flights due 2027-05-12 12:00
Report for Anna by Friday, May 28 at 11am
Réunion budget le 25.05.2027 14:00
Team retro on June 1, 2027 at 10:30
Parents' evening 2027-05-17 at 6pm
1/2 cup of flour for the cake
The shop is open 24/7
Upgrade the router to v2.0.15
Spend 3/4 of the budget on rent
Room 101 is on floor 3
Take 2 pills at night
";

fn notes_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), NOTES).unwrap();
    tmp
}

#[test]
fn memory_dates_lists_exactly_the_ten_dated_lines() {
    let tmp = notes_dir();
    let out = raven_in("Europe/Berlin", tmp.path(), &["memory", "dates", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let found: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let lines: Vec<u64> = found.iter().map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, (2..=11).collect::<Vec<u64>>(), "{}", text(&out.stdout));
    let kind = |line: u64| found.iter().find(|f| f["line"] == line).map(|f| f["kind"].as_str().unwrap().to_owned());
    assert_eq!(kind(5).as_deref(), Some("deadline"));
    assert_eq!(kind(6).as_deref(), Some("duty"));
    assert_eq!(kind(2).as_deref(), Some("event"));
    let done: Vec<u64> = found.iter().filter(|f| f["done"] == true).map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(done, [7]);
    let people = raven_in("Europe/Berlin", tmp.path(), &["memory", "dates"]);
    let listing = text(&people.stdout);
    assert!(listing.contains("times in Europe/Berlin") && listing.contains("(done)"), "{listing}");
    assert_eq!(listing.lines().filter(|l| l.starts_with("line ")).count(), 10, "{listing}");
}

#[test]
fn a_tick_on_each_items_day_before_its_time_nudges_it_and_never_the_done_one() {
    let tmp = notes_dir();
    // (tick time in Europe/Berlin, words the nudge must carry), each a dry run on the same notes.
    let ticks = [
        ("2027-05-03 14:30", "Dentist"),
        ("2027-05-05 09:40", "Zahnarzt"),
        ("2027-05-10 16:30", "tax return"),
        ("2027-05-12 11:30", ""),
        ("2027-05-14 09:00", "checkup for Mia"),
        ("2027-05-17 17:30", "Parents' evening"),
        ("2027-05-20 09:00", "pay the nanny"),
        ("2027-05-25 13:30", "Réunion budget"),
        ("2027-05-28 10:30", "Report for Anna"),
        ("2027-06-01 10:00", "Team retro"),
    ];
    for (at, words) in ticks {
        let out = raven_in("Europe/Berlin", tmp.path(), &["tick", "--at", at]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{at}: {}", text(&out.stderr));
        assert!(!stdout.contains("Book flights"), "never the done one ({at}): {stdout}");
        if words.is_empty() {
            continue;
        }
        // The day's first tick may also send the discovery menu: the nudge is its own line.
        let nudged =
            stdout.lines().any(|l| l.starts_with("[raven ⏰ ") && l.contains("] Reminder") && l.contains(words));
        let heads_up =
            stdout.lines().any(|l| l.starts_with("[raven ⏰ ") && l.contains("] Heads-up") && l.contains(words));
        // Or the morning brief names it as an item of its own (`1. checkup for Mia …`).
        let briefed = stdout.contains("brief:    the morning brief, delivered to")
            && stdout.lines().any(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(words));
        assert!(nudged || heads_up || briefed, "{at}: a nudge names `{words}`: {stdout}");
        assert!(briefed || stdout.contains("route:    nudge\n"), "{at}: {stdout}");
    }
}

#[test]
fn memory_dates_says_when_the_heads_up_a_line_asks_for_comes() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    let notes = "Anniversary on Dec 10 2027, book the restaurant a week before\n2027年12月20日 体检，提前3天准备材料\n\
                 Standup every weekday at 9:30\nPay the nanny on the 20th of every month\n";
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), notes).unwrap();
    let listing = text(&raven_in("Europe/Berlin", tmp.path(), &["memory", "dates"]).stdout);
    assert!(listing.contains("[heads-up from Fri 3 Dec: 1 week before, as the line asks]"), "{listing}");
    assert!(listing.contains("[heads-up from Fri 17 Dec: 3 days before, as the line asks]"), "{listing}");
    assert!(listing.contains("Standup  [every weekday at 09:30]"), "a recurrence in words: {listing}");
    assert!(listing.contains("Pay the nanny  [every month on the 20th, all day]"), "{listing}");
    let json = raven_in("Europe/Berlin", tmp.path(), &["memory", "dates", "--json"]);
    let found: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let leads: Vec<Option<i64>> = found.iter().map(|f| f["lead_s"].as_i64()).collect();
    assert_eq!(leads, [Some(7 * 86_400), Some(3 * 86_400), None, Some(3 * 86_400)]);
    let kinds: Vec<Option<&str>> = found.iter().map(|f| f["lead_for"].as_str()).collect();
    assert_eq!(kinds, [None, None, None, Some("payment")], "a lead the line asks for is the line's own");
}

/// A duty every two weeks reads in words, with the start the line wrote; the preferences
/// section (`每天最多：4条`) is no duty.
#[test]
fn memory_dates_reads_every_other_week_and_leaves_the_preferences_alone() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    let notes = "Bins out every other Tuesday from 2027-01-05
Yoga every other Monday at 7pm
\
                 ## 提醒偏好\n- 每天最多：4条\n\n## Proactivity preferences\n- no nudges: 09:00-11:00 every day\n";
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), notes).unwrap();
    let listing = text(&raven_in("Europe/Berlin", tmp.path(), &["memory", "dates"]).stdout);
    assert!(listing.contains("Bins out  [every other Tuesday from 2027-01-05, all day]"), "{listing}");
    assert!(listing.contains("Yoga  [every other Monday at 19:00]"), "{listing}");
    assert_eq!(listing.lines().filter(|l| l.starts_with("line ")).count(), 2, "{listing}");
}

/// A line that asks for no lead gets the one its kind needs (a payment three days, a booking a
/// week), and `raven memory dates` says why; an appointment gets none beyond the day before.
#[test]
fn memory_dates_says_the_heads_up_a_kind_of_item_gets() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("workspace")).unwrap();
    let notes = "Pay the rent on Dec 20 2027\nDentist on Dec 20 2027 at 10am\n2027年12月20日 订餐厅\n";
    std::fs::write(tmp.path().join("workspace/MEMORY.md"), notes).unwrap();
    let listing = text(&raven_in("Europe/Berlin", tmp.path(), &["memory", "dates"]).stdout);
    let line = |n: &str| listing.lines().find(|l| l.starts_with(&format!("line {n} "))).unwrap_or_default().to_owned();
    assert!(line("1").ends_with("[heads-up from Fri 17 Dec: 3 days before, as for a payment]"), "{listing}");
    assert!(!line("2").contains("heads-up"), "{listing}");
    assert!(line("3").ends_with("[heads-up from Mon 13 Dec: 1 week before, as for a booking]"), "{listing}");
}
