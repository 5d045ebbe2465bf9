//! `raven repl` driven through a pty (tmux), with a supervisor running and with none: a user
//! line gets a reply, and a proactive nudge shows with its marker.

use crate::support;

use support::tmux::Tmux;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn data_dir(dir: &Path) {
    // No quiet hours: the test runs on the real clock, at any hour.
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    support::write_config(dir, config);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    // Due in 20 minutes: the rules provider nudges it at once.
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
}

fn drive(dir: &Path, tag: &str, banner: &str) {
    let t = Tmux::new(tag);
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for(banner);
    t.send("hello");
    t.wait_for("raven> No language model is configured");
    t.send("/tick");
    let screen = t.wait_for("(tick: nudge)");
    let screen = if screen.contains("Call the bank is due") { screen } else { t.wait_for("Call the bank is due") };
    // The nudge shows its short id, and `/stop` (no LLM) dismisses it and mutes its topic;
    // another terminal's `raven policy explain` sees that at once, with no tick in between.
    let line = screen.lines().find(|l| l.contains("] Reminder: Call the bank is due")).unwrap_or_default();
    assert!(line.starts_with("[raven ⏰ "), "{screen}");
    let short = &line["[raven ⏰ ".len()..line.find(']').unwrap()];
    t.send("/stop");
    let screen = t.wait_for("To undo: /ok bank");
    assert!(screen.contains(&format!("dismissed [{short}] as a stop")), "{screen}");
    let explain = support::raven(dir, &["policy", "explain", "--content", "Call the bank", "--priority", "high"]);
    let explain = String::from_utf8_lossy(&explain.stdout).into_owned();
    assert!(explain.contains("verdict: deny at layer 7"), "{explain}");
    assert!(explain.contains("topic `bank` muted by the user until"), "{explain}");
    // A reminder scheduled from another process fires while the prompt waits, and shows
    // between prompts with the marker.
    let added = support::raven(dir, &["cron", "add", "--in", "1s", "Drink some water"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let screen = t.wait_for("Drink some water\n");
    let line = screen.lines().find(|l| l.contains("Drink some water") && !l.contains("job-")).unwrap_or_default();
    assert!(line.starts_with("[raven ⏰ "), "{screen}");
    t.send("/quit");
}

#[test]
fn the_repl_works_with_no_supervisor() {
    let tmp = tempfile::tempdir().unwrap();
    data_dir(tmp.path());
    drive(tmp.path(), "embedded", "no supervisor running; using an engine in this process");
}

#[test]
fn the_repl_attaches_to_a_running_supervisor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let up = support::Killed(
        Command::new(support::raven_bin())
            .env("RAVEN_CLI_ALWAYS", "1")
            .arg("--data-dir")
            .arg(dir)
            .arg("up")
            .env_remove("RAVEN_HOME")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !support::raven(dir, &["status"]).status.success() {
        assert!(Instant::now() < deadline, "raven up never became ready");
        std::thread::sleep(Duration::from_millis(5));
    }
    drive(dir, "attached", &format!("attached to the supervisor (pid {})", up.0.id()));
}

#[test]
fn a_killed_supervisor_is_replaced_and_the_gateway_and_the_repl_reconnect() {
    const SECRET: &str = "s3cret";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let env = [("RAVEN_GATEWAY_SECRET", SECRET)];
    let mut first = support::up(dir, "", &env);
    support::wait_ready(dir);
    let gateway = || -> Option<(String, u32)> {
        let line = std::fs::read_to_string(dir.join("gateway.addr")).ok()?;
        let (addr, pid) = line.trim().split_once(' ')?;
        Some((addr.to_owned(), pid.parse().ok()?))
    };
    support::eventually("the gateway", || gateway().is_some_and(|(a, _)| std::net::TcpStream::connect(a).is_ok()));
    let (addr, gateway_pid) = gateway().unwrap();
    let t = Tmux::new("reattach");
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for(&format!("attached to the supervisor (pid {})", first.id()));

    assert!(Command::new("kill").args(["-KILL", &first.id().to_string()]).status().unwrap().success());
    first.wait().unwrap();
    t.wait_for("(the supervisor went away; reattaching…)");
    let second = support::Killed(support::up(dir, "", &env));
    support::wait_ready(dir);
    t.wait_for(&format!("(reattached to the supervisor, pid {})", second.0.id()));
    t.send("hello again");
    t.wait_for("raven> No language model is configured");

    // The gateway outlived the first supervisor and was adopted by the second.
    assert_eq!(gateway().unwrap().1, gateway_pid);
    let status = support::wait_ready(dir);
    assert!(status.contains(&format!("gateway pid {gateway_pid}")), "{status}");
    let body = br#"{"channel": "webhook", "chat_id": "ann", "text": "still there?"}"#;
    let (code, reply) = support::http(&addr, "POST", "/inbound", Some(SECRET), body);
    assert_eq!(code, 200, "{reply}");
    t.send("/quit");
}

#[test]
fn a_reminder_carrying_escape_sequences_reaches_the_repl_without_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let t = Tmux::new("escapes");
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for("no supervisor running; using an engine in this process");
    let title = || t.run(&["display-message", "-p", "-t", "t", "#{pane_title}"]).trim().to_owned();
    let before = title();
    let added = support::raven(dir, &["cron", "add", "--in", "1s", "Tea\u{1b}]0;owned\u{7} time\u{1b}[2J"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let screen = t.wait_for("Tea time");
    assert!(!screen.contains("owned") && !screen.contains("0;"), "{screen}");
    assert_eq!(title(), before, "the reminder retitled the terminal");
    t.send("/quit");
}

#[test]
fn ctrl_c_drops_a_half_typed_line_and_the_history_keeps_every_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let t = Tmux::new("ctrl-c");
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for("using an engine in this process");
    t.keys("half a li");
    t.keys("C-c");
    t.wait_for("(line dropped; Ctrl-D or /quit leaves)");
    assert!(!t.ended(), "Ctrl-C did not leave the REPL");
    t.send("/cron");
    t.wait_for("no jobs");
    t.keys("C-d");
    support::eventually("Ctrl-D to leave the REPL", || t.ended());
    let history = std::fs::read_to_string(dir.join("repl_history")).unwrap();
    assert!(history.lines().any(|l| l == "/cron"), "{history}");
    assert!(!history.contains("half a li"), "{history}");
}

#[test]
fn piped_input_is_answered_line_by_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let mut child = Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
        .arg("--data-dir")
        .arg(dir)
        .arg("repl")
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"hello\n/remind in 10m tea\n/cron\n").unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let replies: Vec<&str> = stdout.lines().filter(|l| l.starts_with("raven> ")).collect();
    assert_eq!(replies.len(), 2, "{stdout}");
    assert!(replies[0].contains("No language model is configured"), "{stdout}");
    assert!(replies[1].contains("Reminder set:"), "{stdout}");
    assert!(stdout.contains("cli:local") && stdout.contains("tea"), "the /cron listing came last: {stdout}");
}
