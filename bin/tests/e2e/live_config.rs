//! config.toml followed by a running `raven up`: a change of `cron.forward_channels`
//! reroutes the next fire without a restart; a file that does not parse changes nothing and
//! is named in the journal; a key that needs a restart is named as such and keeps its
//! running value.

use crate::support;

use std::path::Path;

const BEFORE: &str = "[gateway]\nenabled = false\n[delivery]\njsonl_path = \"out.jsonl\"\n\
                      [sentinel]\nenabled = false\n[cron]\nforward_channels = []\n";

fn out(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn journal(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("journal.jsonl")).unwrap_or_default()
}

/// The journal lines of one kind, parsed.
fn lines_of(dir: &Path, kind: &str) -> Vec<serde_json::Value> {
    journal(dir)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == kind)
        .collect()
}

/// Adds a cli reminder due in `secs` seconds; the number of fires so far.
fn add(dir: &Path, secs: u32, text: &str) -> usize {
    let fires = lines_of(dir, "cron").len();
    let o = support::raven(dir, &["cron", "add", "--in", &format!("{secs}s"), text]);
    assert!(o.status.success(), "{}", out(&o));
    fires
}

/// Waits for the fire after the first `fires`; where it was delivered.
fn fired(dir: &Path, fires: usize) -> Vec<String> {
    support::eventually("a fire", || lines_of(dir, "cron").len() > fires);
    let fire = lines_of(dir, "cron").pop().unwrap();
    fire["delivered_to"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
}

fn rewrite_and_wait(dir: &Path, config: &str) -> serde_json::Value {
    let seen = lines_of(dir, "config").len();
    support::write_config(dir, config);
    support::eventually("the config line", || lines_of(dir, "config").len() > seen);
    lines_of(dir, "config").pop().unwrap()
}

#[test]
fn a_changed_forward_channel_reroutes_the_next_fire_without_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let up = support::Killed(support::up(dir, BEFORE, &[]));
    support::wait_ready(dir);
    let first = fired(dir, add(dir, 1, "First tea"));
    assert!(first.iter().all(|t| t.starts_with("cli:")), "{first:?}");

    let line = rewrite_and_wait(dir, &BEFORE.replace("forward_channels = []", "forward_channels = [\"jsonl:me\"]"));
    assert_eq!(line["applied"], serde_json::json!(["cron.forward_channels"]), "{line}");
    assert_eq!(fired(dir, add(dir, 1, "Second tea")), vec!["jsonl:me".to_owned()]);
    let written = std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default();
    assert!(written.contains("Second tea") && !written.contains("First tea"), "{written}");

    let log = out(&support::raven(dir, &["log"]));
    assert!(log.contains("config.toml: applied cron.forward_channels"), "{log}");
    assert_eq!(up.0.id(), pid_of(dir), "the same supervisor, never restarted");
}

#[test]
fn a_broken_file_changes_nothing_and_a_restart_key_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, BEFORE, &[]));
    support::wait_ready(dir);

    // Added first: the command reads config.toml too, and refuses a broken one.
    let fires = add(dir, 3, "Tea");
    let broken = BEFORE.replace("forward_channels = []", "forward_channels = [\"jsonl:me\"\n");
    let line = rewrite_and_wait(dir, &broken);
    assert!(line["error"].as_str().unwrap().contains("config.toml"), "{line}");
    assert!(fired(dir, fires).iter().all(|t| t.starts_with("cli:")), "the running config stays");

    let zone = BEFORE.replace("[gateway]", "[general]\ntimezone = \"Asia/Tokyo\"\n[gateway]");
    let line = rewrite_and_wait(dir, &zone);
    assert_eq!(line["needs_restart"], serde_json::json!(["general.timezone"]), "{line}");
    let status = out(&support::raven(dir, &["status"]));
    assert!(
        status.contains(&support::zone()) && !status.contains("Asia/Tokyo"),
        "the zone is the running one until a restart: {status}"
    );
}

/// The supervisor's pid as `raven status --json` says it.
fn pid_of(dir: &Path) -> u32 {
    let o = support::raven(dir, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("status --json parses");
    v["supervisor"]["pid"].as_u64().expect("a pid") as u32
}

/// A `[policy]` change reaches the running supervisor at its next tick: a deadline the open
/// policy let through is held back by quiet hours set while it runs (the tick's quiet-hours
/// fast path), by the same supervisor.
#[test]
fn a_changed_policy_holds_the_next_tick_of_the_running_supervisor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    let memory = format!("- [ ] Call the bank due: {due}\n- [ ] Water the garden due: {due}\n");
    std::fs::write(dir.join("workspace/MEMORY.md"), memory).unwrap();
    let open = BEFORE.replace(
        "[cron]",
        "[policy]\nsession_cooldown_minutes = 0\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n[cron]",
    );
    let up = support::Killed(support::up(dir, &open, &[]));
    support::wait_ready(dir);
    let first = out(&support::raven(dir, &["tick"]));
    assert!(first.contains("the supervisor's tick") && first.contains("delivered"), "{first}");

    let quiet = open.replace("end = \"00:00\"", "end = \"23:59\"");
    let line = rewrite_and_wait(dir, &quiet);
    assert!(line["applied"].as_array().unwrap().iter().any(|k| k.as_str().unwrap().starts_with("policy")), "{line}");
    let second = out(&support::raven(dir, &["tick"]));
    assert!(second.contains("fast_path:quiet_hours"), "the new quiet hours hold it now: {second}");
    assert_eq!(up.0.id(), pid_of(dir), "the same supervisor, never restarted");
}

#[test]
fn the_sentinel_tick_is_turned_on_without_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let up = support::Killed(support::up(dir, BEFORE, &[]));
    let status = support::wait_ready(dir);
    assert!(status.contains("sentinel tick (off"), "{status}");
    assert!(lines_of(dir, "tick").is_empty(), "off: no tick");

    let on = BEFORE.replace("[sentinel]\nenabled = false\n", "[sentinel]\nenabled = true\ninterval_s = 1\n");
    let line = rewrite_and_wait(dir, &on);
    assert_eq!(line["applied"], serde_json::json!(["sentinel.enabled", "sentinel.interval_s"]), "{line}");
    support::eventually("a tick", || !lines_of(dir, "tick").is_empty());
    let status = out(&support::raven(dir, &["status"]));
    assert!(!status.contains("sentinel tick (off"), "{status}");
    assert_eq!(up.0.id(), pid_of(dir), "the same supervisor, never restarted");
}
