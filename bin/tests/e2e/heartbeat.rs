//! The heartbeat against a real `raven up`: `raven status` lists Cron and Heartbeat with
//! their next fire; `raven wake` ends the heartbeat's hour-long sleep at once and prints what
//! the tick did; open tasks in
//! HEARTBEAT.md run one agent turn whose result is delivered, and a file with every task done
//! runs none.

use crate::support;

use std::path::Path;

// The real clock: no quiet hours and no session cooldown, so the gate never holds the
// heartbeat and the second tick's skip is the file's doing.
const CONFIG: &str = "[delivery]\njsonl_path = \"out.jsonl\"\ndefault_targets = [\"jsonl:me\"]\n\
                      [heartbeat]\ninterval_s = 3600\nwake_min_gap_s = 1\n\
                      [policy]\nsession_cooldown_minutes = 0\n\
                      [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";

fn delivered(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default()
}

/// `raven wake`, which waits for the tick it asked for; what it printed.
fn wake(dir: &Path) -> String {
    let out = support::raven(dir, &["wake", "test"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The heartbeat ticks the supervisor logged, each with its outcome.
fn ticks(dir: &Path) -> Vec<String> {
    let log = std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    log.lines().filter(|l| l.contains("heartbeat tick")).map(str::to_owned).collect()
}

#[test]
fn a_wake_runs_the_heartbeat_now_open_tasks_are_delivered_and_done_ones_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    std::fs::write(dir.join("workspace/HEARTBEAT.md"), "# Tasks\n- [ ] Water the plants\n- [x] Pay rent\n").unwrap();
    let _up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_LOG", "warn,raven_actors::heartbeat=info")]));
    let status = support::wait_ready(dir);
    for row in ["Cron", "Heartbeat"] {
        assert!(status.lines().any(|l| l.starts_with(row)), "{row} missing:\n{status}");
    }
    let next = status.lines().find(|l| l.starts_with("next heartbeat:")).unwrap();
    assert!(!next.contains("nothing"), "the hourly heartbeat is scheduled: {next}");
    assert!(status.lines().any(|l| l.starts_with("next cron:")), "{status}");
    support::eventually("the gateway to host jsonl", || {
        support::raven(dir, &["send", "jsonl:me", "warm-up"]).status.success()
    });
    let said = wake(dir);
    assert!(said.contains("heartbeat wake requested") && said.contains("heartbeat ran → jsonl:me"), "{said}");
    support::eventually("the heartbeat's delivery", || delivered(dir).contains("Water the plants"));
    assert!(!delivered(dir).contains("Pay rent"), "a done task is not open: {}", delivered(dir));
    support::eventually("the tick's log line", || ticks(dir).len() == 1);
    let t = ticks(dir);
    assert!(t[0].contains("Ran") && t[0].contains("wake"), "{t:?}");
    // Every task done: the next wake reviews the file and runs no turn.
    std::fs::write(dir.join("workspace/HEARTBEAT.md"), "# Tasks\n- [x] Water the plants\n").unwrap();
    let before = delivered(dir).matches("Open tasks").count();
    std::thread::sleep(std::time::Duration::from_millis(1100)); // past the 1 s rate guard
    let said = wake(dir);
    assert!(said.contains("heartbeat skipped — "), "the outcome, with its reason: {said}");
    support::eventually("the second heartbeat tick", || ticks(dir).len() == 2);
    let second = &ticks(dir)[1];
    assert!(second.contains("Skipped") && !second.contains("the gate"), "{second}");
    assert_eq!(delivered(dir).matches("Open tasks").count(), before, "no turn, nothing delivered");
}
