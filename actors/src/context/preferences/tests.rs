use super::*;
use crate::config::{DndWindow, PolicyConfig, TimeOfDay, Window};
use crate::policy::overrides::tighten;
use crate::policy::NudgePolicy;
use chrono::{TimeZone, Utc, Weekday};
use raven_proto::{Action, PolicyLayer, Priority};

fn section(lines: &str) -> String {
    format!("# Memory\n\nLikes tea.\n\n## Proactivity preferences\n{lines}\n## Projects\n- max per day: 1\n")
}

fn w(h1: u32, m1: u32, h2: u32, m2: u32) -> Window {
    Window::new(TimeOfDay::hm(h1, m1), TimeOfDay::hm(h2, m2))
}

fn dnd(start: TimeOfDay, end: TimeOfDay, weekdays: Vec<Weekday>) -> DndWindow {
    DndWindow { name: "no nudges (preferences)".into(), start, end, weekdays }
}

#[test]
fn each_key_of_the_memory_section_is_parsed() {
    let md = section(
        "- quiet hours: 22:00-08:00\n- max per day: 3\n- max per weekend day: 2\n- max per hour: 1\n- session cooldown: 45m\n\
         - no nudges: 09:00-09:30 mon-fri\n",
    );
    let (o, notes) = parse_memory_md(&md);
    assert!(notes.is_empty(), "{notes:?}");
    let weekdays = vec![Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri];
    assert_eq!(
        o,
        PolicyOverrides {
            quiet_hours: Some(w(22, 0, 8, 0)),
            max_per_day: Some(3),
            max_per_weekend_day: Some(2),
            max_per_hour: Some(1),
            session_cooldown_minutes: Some(45),
            dnd_windows: vec![dnd(TimeOfDay::hm(9, 0), TimeOfDay::hm(9, 30), weekdays)],
            ..Default::default()
        },
        "and `max per day: 1` under ## Projects is not a preference"
    );
}

#[test]
fn the_section_reads_in_chinese_too() {
    let md = "# 备忘\n\n## 提醒偏好\n- 安静时间：22:30-06:00\n- 每天最多：3条\n- 周末每天最多：2\n- 每小时最多: 1\n\
              - 勿扰：13:00-14:30 周末\n- 勿扰：09:00至11:00 工作日\n## 其他\n- 每天最多：9\n";
    let (o, notes) = parse_memory_md(md);
    assert!(notes.is_empty(), "{notes:?}");
    let weekdays = vec![Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri];
    assert_eq!(
        o,
        PolicyOverrides {
            quiet_hours: Some(w(22, 30, 6, 0)),
            max_per_day: Some(3),
            max_per_weekend_day: Some(2),
            max_per_hour: Some(1),
            dnd_windows: vec![
                dnd(TimeOfDay::hm(13, 0), TimeOfDay::hm(14, 30), vec![Weekday::Sat, Weekday::Sun]),
                dnd(TimeOfDay::hm(9, 0), TimeOfDay::hm(11, 0), weekdays),
            ],
            ..Default::default()
        }
    );
}

#[test]
fn value_forms_keys_and_days_are_read_leniently() {
    let one = |line: &str| {
        let (o, notes) = parse_memory_md(&section(line));
        assert!(notes.is_empty(), "{line}: {notes:?}");
        o
    };
    assert_eq!(one("* Quiet_Hours : 21:30 – 7:15").quiet_hours, Some(w(21, 30, 7, 15)));
    assert_eq!(one("quiet-hours: 22:00 to 08:00").quiet_hours, Some(w(22, 0, 8, 0)));
    for (text, minutes) in [("45", 45), ("45 min", 45), ("1h", 60), ("1h30m", 90), ("2 hours", 120)] {
        assert_eq!(one(&format!("session cooldown: {text}")).session_cooldown_minutes, Some(minutes), "{text}");
    }
    assert_eq!(one("session_cooldown_minutes: 50").session_cooldown_minutes, Some(50));
    use Weekday::*;
    for (days, want) in [
        ("", vec![]),
        ("daily", vec![]),
        ("every day", vec![]),
        ("mon-sun", vec![]),
        ("sat,sun", vec![Sat, Sun]),
        ("tue thu", vec![Tue, Thu]),
        ("Weekends", vec![Sat, Sun]),
        ("weekdays", vec![Mon, Tue, Wed, Thu, Fri]),
        ("fri-mon", vec![Mon, Fri, Sat, Sun]),
        ("monday, wednesday", vec![Mon, Wed]),
    ] {
        let o = one(&format!("no nudges: 12:00-13:00 {days}"));
        assert_eq!(o.dnd_windows[0].weekdays, want, "{days}");
    }
    let o = one("no nudges: 12:00-13:00\nno nudges: 18:00 to 19:00 sun");
    assert_eq!(o.dnd_windows.len(), 2, "no nudges may repeat");
    assert_eq!((o.dnd_windows[1].start, o.dnd_windows[1].weekdays.clone()), (TimeOfDay::hm(18, 0), vec![Sun]));
    assert_eq!(one("max per day: 4\nmax per day: 2").max_per_day, Some(2), "the later line wins");
}

#[test]
fn a_bad_line_is_named_in_a_note_and_the_rest_still_applies() {
    let md = section(
        "- quiet hours: late\n- max per day: 3\n- loudness: low\nbe gentle\n- max per hour: many\n\
         - no nudges: 09:00-09:30 someday\n- session cooldown: 45 fortnights\n- quiet hours: 22:00-22:00\n",
    );
    let (o, notes) = parse_memory_md(&md);
    assert_eq!(o, PolicyOverrides { max_per_day: Some(3), ..Default::default() });
    let want = [
        "workspace/MEMORY.md line 6: `late` is not a window HH:MM-HH:MM: `quiet hours: late`",
        "workspace/MEMORY.md line 8: unknown key `loudness`: `loudness: low`",
        "workspace/MEMORY.md line 9: not a `key: value` line: `be gentle`",
        "workspace/MEMORY.md line 10: `many` is not a whole number: `max per hour: many`",
        "workspace/MEMORY.md line 11: `someday` is not a day (mon ... sun): `no nudges: 09:00-09:30 someday`",
        "workspace/MEMORY.md line 12: `45 fortnights` is not a duration like 45m or 1h30m: `session cooldown: 45 fortnights`",
        "workspace/MEMORY.md line 13: `22:00-22:00` is an empty window: `quiet hours: 22:00-22:00`",
    ];
    assert_eq!(notes, want);
}

#[test]
fn only_the_preferences_section_is_read() {
    let md = "max per day: 1\n## proactivity preferences ##\nmax per hour: 1\n### Evenings\nquiet hours: 21:00-07:00\n\
              #quiet\n# Other\nmax per day: 2\n## Proactivity preferences\nsession cooldown: 60\n";
    let (o, notes) = parse_memory_md(md);
    assert_eq!(
        notes,
        vec!["workspace/MEMORY.md line 6: not a `key: value` line: `#quiet`".to_owned()],
        "a hashtag is text"
    );
    assert_eq!(
        o,
        PolicyOverrides {
            quiet_hours: Some(w(21, 0, 7, 0)),
            max_per_hour: Some(1),
            session_cooldown_minutes: Some(60),
            ..Default::default()
        }
    );
    assert_eq!(parse_memory_md("## Proactivity\nmax per day: 1\n").0, PolicyOverrides::default());
}

const TOML: &str = r#"
quiet_hours = { start = "21:00", end = "08:00" }
max_per_day = 2
max_per_hour = 1
session_cooldown_minutes = 90
dnd_windows = [{ name = "standup", start = "09:00", end = "09:30", weekdays = ["mon", "Tue"] }]
"#;

#[test]
fn preferences_toml_is_parsed_and_an_unknown_key_is_an_error_naming_it() {
    let o = parse_toml(TOML).unwrap();
    assert_eq!(
        o,
        PolicyOverrides {
            quiet_hours: Some(w(21, 0, 8, 0)),
            max_per_day: Some(2),
            max_per_hour: Some(1),
            session_cooldown_minutes: Some(90),
            dnd_windows: vec![DndWindow {
                name: "standup".into(),
                start: TimeOfDay::hm(9, 0),
                end: TimeOfDay::hm(9, 30),
                weekdays: vec![Weekday::Mon, Weekday::Tue],
            }],
            ..Default::default()
        }
    );
    assert_eq!(parse_toml("").unwrap(), PolicyOverrides::default());
    let err = parse_toml("max_per_dya = 2").unwrap_err().to_string();
    assert!(err.starts_with("preferences.toml line 1: ") && err.contains("max_per_dya"), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
    assert!(parse_toml("max_per_day = \"two\"").is_err());
}

#[test]
fn preferences_toml_wins_a_field_both_set_and_windows_of_both_apply() {
    let md = section("quiet hours: 22:00-08:00\nmax per day: 3\nmax per hour: 1\nno nudges: 12:00-13:00\n");
    let p = parse(Some(&md), Some("quiet_hours = { start = \"21:00\", end = \"08:00\" }\nmax_per_day = 3\ndnd_windows = [{ name = \"standup\", start = \"09:00\", end = \"09:30\" }]\n")).unwrap();
    assert_eq!(p.overrides.quiet_hours, Some(w(21, 0, 8, 0)), "the TOML file's window first");
    assert_eq!(p.overrides.more_quiet_hours, vec![w(22, 0, 8, 0)], "MEMORY.md's is merged in, never dropped");
    assert_eq!((p.overrides.max_per_day, p.overrides.max_per_hour), (Some(3), Some(1)));
    let names: Vec<&str> = p.overrides.dnd_windows.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["no nudges (preferences)", "standup"]);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    assert!(parse(Some(&md), Some("max_per_day = [")).is_err(), "a broken TOML file is an error");
}

#[test]
fn read_takes_missing_files_as_no_preferences() {
    let dir = tempfile::tempdir().unwrap();
    let d = DataDir::new(dir.path());
    assert_eq!(read(&d.memory(), &toml_path(&d)).unwrap(), Preferences::default());
    d.ensure().unwrap();
    std::fs::write(d.memory(), section("max per day: 3")).unwrap();
    std::fs::write(toml_path(&d), "max_per_hour = 1\n").unwrap();
    let p = read(&d.memory(), &toml_path(&d)).unwrap();
    assert_eq!((p.overrides.max_per_day, p.overrides.max_per_hour), (Some(3), Some(1)));
    assert!(toml_path(&d).ends_with("user_memory/preferences.toml"));
}

#[test]
fn through_tighten_a_wider_quiet_window_is_honoured_and_a_narrower_one_changes_nothing() {
    let base = PolicyConfig::default();
    assert_eq!(base.quiet_hours, w(23, 0, 7, 0));
    let (wider, _) = parse_memory_md(&section("quiet hours: 22:00-08:00\nmax per day: 3"));
    let (eff, notes) = tighten(&base, &wider);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!((eff.quiet_hours, eff.max_per_day), (w(22, 0, 8, 0), 3));

    let (narrower, reader_notes) = parse_memory_md(&section("quiet hours: 23:30-06:00\nmax per day: 3"));
    assert!(reader_notes.is_empty(), "the reader does not judge: {reader_notes:?}");
    let (eff, notes) = tighten(&base, &narrower);
    assert_eq!((eff.quiet_hours, eff.max_per_day), (base.quiet_hours, 3), "the rest still tightens");
    assert!(notes.is_empty() && eff.extra_quiet_hours.is_empty(), "{notes:?}");
}

#[test]
fn a_no_nudges_line_mutes_the_gate_on_its_days() {
    let (o, _) = parse_memory_md(&section("no nudges: 09:00-09:30 mon-fri"));
    let mut policy = NudgePolicy::new(PolicyConfig::default(), chrono_tz::Tz::UTC);
    assert!(policy.set_overrides(&o).is_empty());
    let check = |at| policy.check(Action::Nudge, Some("cli:1"), "stretch", Priority::Low, at);
    let monday = Utc.with_ymd_and_hms(2026, 3, 2, 9, 15, 0).unwrap();
    let v = check(monday);
    assert_eq!((v.allow, v.layer), (false, Some(PolicyLayer::PersonaDnd)), "{}", v.reason);
    assert!(check(monday + chrono::Duration::minutes(20)).allow, "after the window");
    assert!(check(monday + chrono::Duration::days(5)).allow, "on a Saturday");
}

#[test]
fn poll_sends_only_changed_overrides_and_reports_notes_and_errors_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = DataDir::new(dir.path());
    d.ensure().unwrap();
    let mut r = ProactivityPreferencesReader::for_data_dir(&d);
    assert_eq!(r.poll(), PreferencesPoll::default(), "no preferences: nothing to send");

    std::fs::write(d.memory(), section("max per day: 3")).unwrap();
    let p = r.poll();
    assert_eq!(p.send.unwrap().max_per_day, Some(3));
    assert_eq!(r.poll(), PreferencesPoll::default(), "unchanged: skipped");

    std::fs::write(d.memory(), section("max per day: 3\nloudness: low")).unwrap();
    let p = r.poll();
    assert_eq!((p.send, p.notes.len()), (None, 1), "a new bad line is noted, the overrides are the same");
    assert_eq!(r.poll(), PreferencesPoll::default(), "and noted once");

    std::fs::write(toml_path(&d), "max_per_day = [").unwrap();
    let p = r.poll();
    assert!(p.send.is_none() && p.error.unwrap().to_string().contains("preferences.toml"));
    assert_eq!(r.poll().error, None, "the same error is reported once");

    std::fs::write(toml_path(&d), "max_per_day = 2").unwrap();
    assert_eq!(r.poll().send.unwrap().max_per_day, Some(2));
    r.resend();
    assert_eq!(r.poll().send.unwrap().max_per_day, Some(2), "resend forgets what was sent");

    std::fs::remove_file(toml_path(&d)).unwrap();
    std::fs::remove_file(d.memory()).unwrap();
    assert_eq!(r.poll().send, Some(PolicyOverrides::default()), "removing them all clears the overrides");
}
