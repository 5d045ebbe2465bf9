//! The gate across processes: two REPL engines (each with its runner, heartbeat, discovery and
//! outbox loops, the Sentinel on and ticking every second) and rounds of eight `raven tick`
//! processes dispatch on one data dir at once. Never more deliveries than the day cap, never one
//! text twice, and the engines' own ticks are among those that delivered.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DAY_CAP: usize = 2;

/// Heads-ups only (each deadline hours away), so every tick proposes the first one not yet
/// told: the day cap is what binds, and the dedup window.
fn data_dir(dir: &Path) {
    let config = format!(
        "[sentinel]\nenabled = true\ninterval_s = 1\n\
         [policy]\nmax_per_day = {DAY_CAP}\nmax_per_hour = 50\nsession_cooldown_minutes = 0\n\
         topic_max_per_hour = 50\ntopic_max_per_day = 50\ntopic_max_per_week = 50\n\
         [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n"
    );
    support::write_config(dir, &config);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let now = chrono::Utc::now();
    let memory: String = ["Renew the passport", "File the tax return", "Book the vet", "Pay the plumber"]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let due = (now + chrono::Duration::hours(3 + i as i64)).format("%Y-%m-%d %H:%M");
            format!("- [ ] {t} due: {due}\n")
        })
        .collect();
    std::fs::write(dir.join("workspace/MEMORY.md"), memory).unwrap();
}

/// Every proactive line written into a conversation: (UTC day, text, the id of the process
/// that sent it, read from its nudge id `n-<time>-<pid>-<seq>`).
fn delivered(dir: &Path) -> Vec<(String, String, u32)> {
    let Ok(entries) = std::fs::read_dir(dir.join("sessions")) else { return Vec::new() };
    let mut out = Vec::new();
    for e in entries {
        // A file that went between the listing and the read (a lock, a replaced temp file)
        // holds no line of a conversation.
        let Ok(text) = std::fs::read_to_string(e.unwrap().path()) else { continue };
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v["proactive"] == true && v["source"] != "cron" {
                let day = v["at"].as_str().unwrap_or_default().get(..10).unwrap_or_default().to_owned();
                let pid = v["nudge_id"].as_str().and_then(|id| id.split('-').nth(2)?.parse().ok()).unwrap_or(0);
                out.push((day, v["content"].as_str().unwrap_or_default().to_owned(), pid));
            }
        }
    }
    out
}

/// `raven <command>` on `dir`, started with its output discarded (stdin kept open).
fn start(dir: &Path, command: &str) -> std::process::Child {
    Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
        .arg("--data-dir")
        .arg(dir)
        .arg(command)
        .env_remove("RAVEN_HOME")
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn eight_tick_processes_and_two_engines_never_pass_the_day_cap_or_repeat_a_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let engines = [support::Killed(start(dir, "repl")), support::Killed(start(dir, "repl"))];
    let engine_pids: BTreeSet<u32> = engines.iter().map(|e| e.0.id()).collect();
    // The engines tick on their own first (each second), against each other.
    let deadline = Instant::now() + Duration::from_secs(10);
    while delivered(dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let until = Instant::now() + Duration::from_secs(3);
    let mut rounds = 0;
    while Instant::now() < until {
        let ticks: Vec<_> = (0..8).map(|_| start(dir, "tick")).collect();
        for mut t in ticks {
            t.wait().unwrap();
        }
        rounds += 1;
    }
    drop(engines);

    let said = delivered(dir);
    let mut per_day: BTreeMap<&str, usize> = BTreeMap::new();
    for (day, _, _) in &said {
        *per_day.entry(day).or_default() += 1;
    }
    assert!(per_day.values().all(|n| *n <= DAY_CAP), "past the day cap of {DAY_CAP}: {said:?}");
    let texts: BTreeSet<&str> = said.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(texts.len(), said.len(), "a text delivered twice: {said:?}");
    assert!(!said.is_empty(), "nothing was delivered in {rounds} rounds: the test proved nothing");
    assert!(
        said.iter().any(|(_, _, pid)| engine_pids.contains(pid)),
        "the engines {engine_pids:?} never delivered: they did not contend ({said:?})"
    );
}
