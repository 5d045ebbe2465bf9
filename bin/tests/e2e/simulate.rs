//! `raven simulate` as a user runs it: the shipped week twice gives the same bytes, and a
//! bad scenario is a clear error with exit code 2.

use std::path::Path;
use std::process::{Command, Output};

fn simulate(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raven"))
        .arg("simulate")
        .args(args)
        .current_dir(cwd)
        .env_remove("RAVEN_HOME")
        .output()
        .expect("run raven")
}

fn week() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/week.toml").display().to_string()
}

#[test]
fn the_week_simulated_twice_gives_byte_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for out in [&a, &b] {
        let run = simulate(&[&week(), "--out", &out.display().to_string()], tmp.path());
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("simulation `a working week`") && stdout.contains("timeline.svg"), "{stdout}");
    }
    for name in ["report.txt", "report.json", "timeline.svg"] {
        let (x, y) = (std::fs::read(a.join(name)).unwrap(), std::fs::read(b.join(name)).unwrap());
        assert!(!x.is_empty(), "{name} is empty");
        assert!(x == y, "{name} differs between two runs of the same scenario and seed");
    }
    let text = std::fs::read_to_string(a.join("report.txt")).unwrap();
    for day in ["2026-03-02", "2026-03-08"] {
        assert!(text.contains(day), "{text}");
    }
    assert!(!text.contains(&tmp.path().display().to_string()), "a temp path leaked into the report");
}

#[test]
fn the_month_of_the_learning_loop_simulated_twice_gives_byte_identical_files() {
    let learning = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/learning.toml").display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for out in [&a, &b] {
        let run = simulate(&[&learning, "--out", &out.display().to_string()], tmp.path());
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
    for name in ["report.txt", "report.json", "timeline.svg"] {
        let (x, y) = (std::fs::read(a.join(name)).unwrap(), std::fs::read(b.join(name)).unwrap());
        assert!(x == y, "{name} differs between two runs of the same scenario and seed");
    }
    let text = std::fs::read_to_string(a.join("report.txt")).unwrap();
    assert!(text.contains("  multiplier:   ") && text.contains("  topics:       "), "{text}");
}

#[test]
fn a_different_seed_and_fewer_days_change_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let run = simulate(&[&week(), "--out", &out.display().to_string(), "--days", "1", "--seed", "7"], tmp.path());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(text.contains("seed 7") && text.contains("2026-03-02") && !text.contains("2026-03-03\n"), "{text}");
}

#[test]
fn a_bad_scenario_names_the_file_and_the_key_and_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, "start = \"2026-03-02T00:00:00Z\"\ntick_minutes = \"often\"\n").unwrap();
    let run = simulate(&[&file.display().to_string()], tmp.path());
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("bad.toml") && err.contains("tick_minutes") && err.contains("line 2"), "{err}");
    assert!(!tmp.path().join("simulation").exists(), "nothing is written for a bad scenario");
}

/// The week's figures that docs/operations.md gives under "Guarantees" ("Not at 3 a.m. for
/// nothing", "Never spams"), read back from the run's report.json: a figure that no longer
/// holds fails here, and the page is corrected with it.
#[test]
fn the_week_s_figures_in_the_guarantees_hold() {
    use chrono::Timelike;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("week");
    let run = simulate(&[&week(), "--out", &out.display().to_string()], tmp.path());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let total = &report["total"];
    assert_eq!(total["nudges"]["nudge"], 11, "Sentinel nudges, five of them a morning brief: {total}");
    assert_eq!(total["topics"]["morning brief"], 5, "{total}");
    assert_eq!(total["heartbeat_runs"], 26, "{total}");
    assert_eq!(total["deliveries"]["cli"], 31, "{total}");
    assert_eq!(total["avoided"]["quiet_hours"], 112, "night ticks on the fast path: {total}");
    assert_eq!(total["llm_calls"], serde_json::json!({}), "{total}");
    let events = report["events"].as_array().unwrap();
    let night = events
        .iter()
        .filter(|e| e["kind"] == "delivered")
        .map(|e| chrono::DateTime::parse_from_rfc3339(e["at"].as_str().unwrap()).unwrap())
        .filter(|at| {
            let hour = at.with_timezone(&chrono_tz::Europe::Berlin).hour();
            !(7..23).contains(&hour)
        })
        .count();
    assert_eq!(night, 0, "deliveries between 23:00 and 07:00");
    let denied: Vec<&serde_json::Value> = events.iter().filter(|e| e["kind"] == "denied").collect();
    let heartbeat_reply = |e: &&&serde_json::Value| e["topic"] == "heartbeat review" || e["topic"] == "status";
    assert!(denied.iter().all(|e| heartbeat_reply(&e)), "only heartbeat replies are held: {denied:?}");
    let layer = |n: &str| denied.iter().filter(|e| e["detail"].as_str().unwrap().starts_with(n)).count();
    let layers =
        [("layer 2:", 14), ("layer 11:", 8), ("layer 10:", 8), ("layer 6:", 2), ("layer 7:", 1), ("layer 5:", 1)];
    assert_eq!(denied.len(), 34, "{denied:?}");
    for (n, count) in layers {
        assert_eq!(layer(n), count, "{n} {denied:?}");
    }
}
