//! A full disk is recovered from without a restart: a supervisor whose writes fail for lack of
//! space (a file-size limit, SIGXFSZ ignored) delivers the next reminder within 5 s of the
//! limit being lifted, and leaves no temp file behind.

use crate::support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Reminders delivered to the jsonl outlet so far.
fn delivered(dir: &Path, text: &str) -> usize {
    std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default().lines().filter(|l| l.contains(text)).count()
}

fn temp_files(dir: &Path) -> Vec<String> {
    let temp = |p: &std::path::PathBuf| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".tmp-"));
    support::files_under(dir).into_iter().filter(temp).map(|p| p.display().to_string()).collect()
}

#[test]
fn after_a_full_disk_the_next_reminder_comes_within_five_seconds_of_space_returning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // No strike pauses the every-second job while fires get through before the disk fills.
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\n[cron]\nmax_sleep_s = 1\nstrike_limit = 1000\n\
                  [delivery]\njsonl_path = \"out.jsonl\"\ndefault_targets = [\"jsonl:me\"]\n";
    support::write_config(dir, config);
    // Files past the limit set below (33 KiB: room for SQLite's 32 KiB shared-memory file,
    // not for jobs.json nor for the write-ahead log of more than a few fires): once the log
    // reaches it, every claim fails while it holds.
    for i in 0..200 {
        let out =
            support::raven(dir, &["cron", "add", "--in", "1h", &format!("later job {i}, padded so the file grows")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = support::raven(dir, &["cron", "add", "--every", "1s", "Stretch now", "--to", "jsonl:me"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The state database is made while there is room (on a disk full from the start, the
    // supervisor refuses to start, saying so).
    let out = support::raven(dir, &["outbox", "drop", "--dead"]);
    assert!(out.status.success() && dir.join("state.db").is_file(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = format!(
        "trap '' XFSZ; ulimit -S -f 66; exec '{}' --data-dir '{}' up",
        support::raven_bin().display(),
        dir.display()
    );
    let log = std::fs::File::create(dir.join("up.stderr")).unwrap();
    let up = support::Killed(
        Command::new("sh")
            .args(["-c", &script])
            .env_remove("RAVEN_HOME")
            .env("TZ", "UTC")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    support::wait_ready(dir);
    // The claims fail on the full disk, saying so.
    let log = || std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    let full = || log().contains("File too large") || log().contains("is the disk full");
    support::eventually_within(
        "the writes failed for lack of space",
        Duration::from_secs(40),
        Duration::from_millis(50),
        full,
    );
    std::thread::sleep(Duration::from_secs(2));
    let before = delivered(dir, "Stretch now");

    let lifted = Command::new("prlimit").args(["--fsize=unlimited", "--pid", &up.0.id().to_string()]).status().unwrap();
    assert!(lifted.success());
    let back = Instant::now();
    support::eventually("a reminder after space returned", || delivered(dir, "Stretch now") > before);
    let took = back.elapsed();
    assert!(took <= Duration::from_secs(5), "the next reminder came {took:?} after space returned");
    drop(up);
    assert!(temp_files(dir).is_empty(), "temp files left: {:?}", temp_files(dir));
}

#[test]
fn an_append_the_disk_cannot_take_leaves_no_torn_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, "[delivery]\njsonl_path = \"out.jsonl\"\n");
    let out = support::raven(dir, &["send", "jsonl:me", "first"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Up to just under the 64 KiB limit below (`ulimit -f` counts 512-byte blocks; the state
    // database's files fit under it): the next line crosses it part way.
    let written = std::fs::metadata(dir.join("out.jsonl")).unwrap().len() as usize;
    let pad = format!("{{\"pad\":\"{}\"}}\n", "a".repeat(64 * 1024 - written - 200));
    std::fs::OpenOptions::new().append(true).open(dir.join("out.jsonl")).unwrap().write_all(pad.as_bytes()).unwrap();
    let before = std::fs::read(dir.join("out.jsonl")).unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -S -f 128; exec '{}' --data-dir '{}' send jsonl:me '{}'",
        support::raven_bin().display(),
        dir.display(),
        "b".repeat(300)
    );
    let out = Command::new("sh").args(["-c", &script]).env("TZ", "UTC").output().unwrap();
    assert!(!out.status.success(), "the send says it failed");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("File too large"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.join("out.jsonl")).unwrap(), before, "the part-written line was taken back");
    // And the next send, with room again, is a whole line of its own.
    let out = support::raven(dir, &["send", "jsonl:me", "after"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    assert!(text.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{text}");
}

#[test]
fn a_log_the_disk_cannot_take_stops_nothing_and_says_what_it_dropped_once_it_can_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\n[cron]\nmax_sleep_s = 1\n\
                  [delivery]\njsonl_path = \"out.jsonl\"\n";
    support::write_config(dir, config);
    let out = support::raven(dir, &["cron", "add", "--every", "1s", "Stretch now", "--to", "jsonl:me"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The log already past the limit below (32 KiB): every line it is given fails to be written.
    std::fs::write(dir.join("up.stderr"), vec![b'.'; 40 << 10]).unwrap();
    let log = std::fs::OpenOptions::new().append(true).open(dir.join("up.stderr")).unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -S -f 64; exec '{}' --data-dir '{}' up",
        support::raven_bin().display(),
        dir.display()
    );
    let up = support::Killed(
        Command::new("sh")
            .args(["-c", &script])
            .env_remove("RAVEN_HOME")
            .env("TZ", "UTC")
            .env("RAVEN_LOG", "debug")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    support::wait_ready(dir);
    // Fires go on while the log cannot be written.
    let first = delivered(dir, "Stretch now");
    support::eventually("reminders while the log is full", || delivered(dir, "Stretch now") >= first + 2);

    let lifted = Command::new("prlimit").args(["--fsize=unlimited", "--pid", &up.0.id().to_string()]).status().unwrap();
    assert!(lifted.success());
    let before = delivered(dir, "Stretch now");
    support::eventually("a reminder after space returned", || delivered(dir, "Stretch now") > before);
    let log = || std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    support::eventually("the log to say what it dropped", || log().contains("log lines were dropped"));
    assert!(!log().contains("panicked"), "{}", log());
    let status = support::raven(dir, &["status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    let cron = status.lines().find(|l| l.trim_start().starts_with("Cron")).unwrap_or_default();
    assert!(!cron.contains("restart"), "the Cron actor never died: {status}");
}
