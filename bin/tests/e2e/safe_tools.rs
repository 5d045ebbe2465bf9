//! The tools that pretend (a simulation, a tick or a turn at another time) never change the
//! user's data dir, and `policy explain` sees the gate a tick would: the user's own quiet hours
//! included.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::raven;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file under `root` with its bytes, lock files left out (taking a lock may make one).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if !path.to_string_lossy().ends_with(".lock") {
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn week() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/week.toml").display().to_string()
}

/// `raven simulate ARGS` with no data dir named: `HOME` is `home`, so a default data dir
/// would be made in it.
fn simulate(home: &Path, args: &[&str]) -> Output {
    Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
        .arg("simulate")
        .args(args)
        .env_remove("RAVEN_HOME")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", home)
        .env("TZ", "UTC")
        .output()
        .expect("run raven")
}

/// A data dir with notes (a deadline, the user's quiet hours) and a job due in an hour.
/// `YYYY-MM-DD HH:MM` in the zone of the tests' `raven` processes, as RFC 3339.
fn local_rfc3339(at: &str) -> String {
    let tz: chrono_tz::Tz = support::zone().parse().unwrap();
    let naive = chrono::NaiveDateTime::parse_from_str(at, "%Y-%m-%d %H:%M").unwrap();
    naive.and_local_timezone(tz).single().unwrap().to_rfc3339()
}

fn users_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
    let notes = "# Notes\n- [ ] Call the bank due: 2099-03-02 12:30\n\n## Proactivity preferences\n- max per day: 5\n";
    std::fs::write(dir.path().join("workspace/MEMORY.md"), notes).unwrap();
    let add = raven(dir.path(), &["cron", "add", "--in", "1h", "tea"]);
    assert!(add.status.success(), "{}", text(&add.stderr));
    dir
}

#[test]
fn simulate_refuses_a_named_data_dir_ignores_raven_home_and_leaves_it_byte_for_byte() {
    let dir = users_dir();
    let out = tempfile::tempdir().unwrap();
    let before = snapshot(dir.path());
    let reports = out.path().join("sim").display().to_string();
    let run = raven(dir.path(), &["simulate", &week(), "--days", "1", "--out", &reports]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stdout));
    let said = text(&run.stderr);
    assert!(said.contains("never touches a real data dir") && said.contains("--keep-data"), "{said}");
    assert!(!out.path().join("sim").exists(), "a refused run writes no report");
    // RAVEN_HOME, often exported for good, is ignored with a word: the run is in its own dir.
    let by_env = Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
        .args(["simulate", &week(), "--days", "1", "--out", &reports])
        .env("RAVEN_HOME", dir.path())
        .output()
        .unwrap();
    assert!(by_env.status.success(), "{}", text(&by_env.stderr));
    assert!(text(&by_env.stderr).contains("RAVEN_HOME is ignored"), "{}", text(&by_env.stderr));
    assert!(out.path().join("sim/report.txt").is_file());
    assert_eq!(snapshot(dir.path()), before, "the data dir is byte for byte as it was");
}

#[test]
fn simulate_runs_in_a_data_dir_of_its_own_and_keeps_it_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let kept = tmp.path().join("kept");
    let args = [week(), "--days".into(), "1".into(), "--out".into(), kept.display().to_string()];
    let mut keep: Vec<&str> = args.iter().map(String::as_str).collect();
    keep.push("--keep-data");
    for _ in 0..2 {
        let run = simulate(&home, &keep);
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert!(text(&run.stdout).contains("(the simulation's data dir)"), "{}", text(&run.stdout));
    }
    assert!(kept.join("report.txt").is_file() && kept.join("data/workspace/MEMORY.md").is_file());
    let plain = tmp.path().join("plain");
    let run = simulate(&home, &[&week(), "--days", "1", "--out", &plain.display().to_string()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(plain.join("report.txt").is_file() && !plain.join("data").exists());
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0, "no default data dir was made");
}

#[test]
fn tick_at_is_a_dry_run_that_saves_nothing() {
    let dir = users_dir();
    // A real tick first, so the state files exist to be compared.
    let real = raven(dir.path(), &["tick"]);
    assert!(real.status.success(), "{}", text(&real.stderr));
    let before = snapshot(dir.path());
    assert!(before.keys().any(|p| p == "state.db"), "{:?}", before.keys());
    // Half an hour before the note's deadline, read in the zone the notes are read in.
    let out = raven(dir.path(), &["tick", "--at", &local_rfc3339("2099-03-02 12:00")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().next(), Some("dry run (nothing is saved)"), "{stdout}");
    assert!(stdout.contains("route:    nudge\n") && stdout.contains("Call the bank"), "it ran: {stdout}");
    assert_eq!(snapshot(dir.path()), before, "no file of the data dir changed");
    // The same time again is not refused by a fire the dry run would have recorded.
    let again = text(&raven(dir.path(), &["tick", "--at", &local_rfc3339("2099-03-02 12:05")]).stdout);
    assert!(again.contains("route:    nudge\n"), "{again}");
}

#[test]
fn say_at_is_a_dry_run_that_saves_nothing() {
    let dir = users_dir();
    let before = snapshot(dir.path());
    let out = raven(dir.path(), &["say", "/remind in 10m stretch", "--at", "2099-03-02T12:00:00Z"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().next(), Some("dry run (nothing is saved)"), "{stdout}");
    assert!(stdout.contains("Reminder set: “stretch”"), "{stdout}");
    assert_eq!(snapshot(dir.path()), before, "no file of the data dir changed");
}

#[test]
fn policy_explain_holds_the_users_own_quiet_hours() {
    let dir = tempfile::tempdir().unwrap();
    let explain = |at: &str| {
        let out = raven(dir.path(), &["policy", "explain", "--content", "Drink water", "--at", at]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert!(explain("22:30").starts_with("verdict: allow"), "outside the configured 23:00-07:00");
    std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
    let notes = "# Notes\n\n## Proactivity preferences\n- quiet hours: 22:00-08:00\n";
    std::fs::write(dir.path().join("workspace/MEMORY.md"), notes).unwrap();
    let said = explain("22:30");
    assert!(said.starts_with("verdict: deny at layer 2 (quiet_hours)"), "{said}");
    std::fs::write(dir.path().join("workspace/MEMORY.md"), "# Notes\n").unwrap();
    std::fs::create_dir_all(dir.path().join("user_memory")).unwrap();
    std::fs::write(
        dir.path().join("user_memory/preferences.toml"),
        "quiet_hours = { start = \"21:00\", end = \"07:00\" }\n",
    )
    .unwrap();
    let said = explain("21:30");
    assert!(said.starts_with("verdict: deny at layer 2 (quiet_hours)"), "{said}");
}
