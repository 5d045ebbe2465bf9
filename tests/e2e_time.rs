//! Time as the user has it, through the real binary: the zone resolved from `TZ`, and the
//! README's quick demo reminding on the terminal in zones far from UTC.

mod support;

use chrono::{Duration, Utc};
use std::path::Path;
use std::process::{Command, Output};

fn raven_in(zone: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(support::raven_bin())
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
    std::fs::write(dir.join("config.toml"), quiet).unwrap();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let line = format!("- [ ] Call the bank due: {}\n", due.format("%Y-%m-%d %H:%M"));
    std::fs::write(dir.join("workspace/MEMORY.md"), line).unwrap();
    let out = raven_in(zone, dir, &["tick"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{zone}: {}", text(&out.stderr));
    let expected = format!("[raven ⏰] Reminder: Call the bank is due at {}.", due.format("%H:%M"));
    assert!(stdout.contains(&expected), "{zone}: {stdout}");
}

#[test]
fn the_quick_demo_reminds_on_the_terminal_in_tokyo() {
    quick_demo_reminds("Asia/Tokyo");
}

#[test]
fn the_quick_demo_reminds_on_the_terminal_in_new_york() {
    quick_demo_reminds("America/New_York");
}
