//! Delivery honesty with no chat channel: a nudge for the terminal while no one watches it
//! (no REPL, stdout not a terminal) is not counted as delivered; it waits in the outbox with
//! its lifetime, and `raven status` and the ready line say how to add a channel. A REPL that
//! attaches gets it.

use crate::support;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A deadline due in 20 minutes, ticked by the running system while no one watches the
/// terminal: what the tick printed.
fn waits_for_the_terminal(dir: &std::path::Path) -> String {
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    text(&support::raven(dir, &["tick"]).stdout)
}

#[test]
fn a_nudge_for_an_unwatched_terminal_waits_and_status_says_how_to_add_a_channel() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[gateway]\nenabled = false\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    let _up = support::Killed(support::up(dir, config, &[("RAVEN_CLI_ALWAYS", "0")]));
    let status = support::wait_ready(dir);
    assert!(status.contains("channels: none") && status.contains("[channels.telegram]"), "{status}");
    support::eventually("the ready lines", || {
        std::fs::read_to_string(dir.join("up.stderr")).is_ok_and(|e| e.contains("no chat channel is set up"))
    });

    let tick = waits_for_the_terminal(dir);
    assert!(tick.contains("not delivered") && tick.contains("no one is watching the terminal"), "{tick}");
    let waiting = text(&support::raven(dir, &["outbox", "--json"]).stdout);
    let entries: serde_json::Value = serde_json::from_str(&waiting).unwrap();
    let entry = &entries[0];
    assert!(entry["text"]["content"].as_str().unwrap().contains("Call the bank"), "{waiting}");
    assert!(entry["expires_at"].is_string(), "it waits with its lifetime: {waiting}");
    let feedback = std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    assert!(!feedback.contains("dispatched"), "not counted as said: {feedback}");

    // A REPL attaches: the waiting nudge reaches it at once (not at the next retry, 30 s on).
    let mut repl = std::process::Command::new(support::raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .arg("repl")
        .env("TZ", "UTC")
        .env_remove("RAVEN_CLI_ALWAYS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = repl.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Well before the outbox's own next try (`outbox_backoff_s`, 30 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut shown = false;
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("[raven ⏰ ") && line.contains("Call the bank") => {
                shown = true;
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let _ = repl.kill();
    let _ = repl.wait();
    assert!(shown, "the REPL showed the nudge within 10 s of attaching");
    let waiting = text(&support::raven(dir, &["outbox", "--json"]).stdout);
    assert_eq!(waiting.trim(), "[]", "delivered, nothing waits: {waiting}");
    let feedback = std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    assert!(feedback.contains("dispatched"), "counted once someone saw it: {feedback}");
}

#[test]
fn a_piped_repl_prints_what_waited_for_the_terminal_before_it_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[gateway]\nenabled = false\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    let _up = support::Killed(support::up(dir, config, &[("RAVEN_CLI_ALWAYS", "0")]));
    support::wait_ready(dir);
    let tick = waits_for_the_terminal(dir);
    assert!(tick.contains("no one is watching the terminal"), "{tick}");

    // `printf '/cron\n' | raven repl`: its input ends at once.
    let mut repl = std::process::Command::new(support::raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .arg("repl")
        .env_remove("RAVEN_CLI_ALWAYS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(repl.stdin.as_mut().unwrap(), b"/cron\n").unwrap();
    drop(repl.stdin.take());
    let out = repl.wait_with_output().unwrap();
    let shown = text(&out.stdout);
    let waiting = text(&support::raven(dir, &["outbox", "--json"]).stdout);
    assert_eq!(waiting.trim(), "[]", "it was delivered to the REPL: {waiting}");
    assert!(
        shown.lines().any(|l| l.starts_with("[raven ⏰ ") && l.contains("Call the bank")),
        "and printed by it: {shown}"
    );
}

/// A system where a nudge waits for an unwatched terminal, then restarted with ntfy added
/// (at a stand-in answering `status`): the data dir, the running system and the stand-in.
fn waited_then_ntfy(status: u16) -> (tempfile::TempDir, support::Killed, support::fake_http::FakeHttp) {
    use support::fake_http::{FakeHttp, Seen};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The outbox's own tries are 5 min apart: only the gateway's connection can be quick.
    let quiet = "[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n[delivery]\noutbox_backoff_s = 300\n";
    let up = support::Killed(support::up(dir, quiet, &[("RAVEN_CLI_ALWAYS", "0")]));
    support::wait_ready(dir);
    let tick = waits_for_the_terminal(dir);
    assert!(tick.contains("no one is watching the terminal"), "{tick}");

    // The user adds ntfy: `raven status` says it starts with the next `raven up`; she restarts.
    let ntfy =
        FakeHttp::start(std::sync::Arc::new(move |_: &Seen| (status, r#"{"id":"x","event":"message"}"#.to_owned())));
    let config = format!("{quiet}[channels.ntfy]\nenabled = true\nserver = \"{}\"\ntopic = \"raven-test\"\n", ntfy.url);
    support::write_config(dir, &format!("[gateway]\nlisten = \"127.0.0.1:0\"\n{config}"));
    let status = text(&support::raven(dir, &["status"]).stdout);
    assert!(status.contains("ntfy: not started: a channel starts with `raven up`"), "{status}");
    drop(up);
    let up = support::Killed(support::up(dir, &config, &[("RAVEN_CLI_ALWAYS", "0")]));
    support::wait_ready(dir);
    (tmp, up, ntfy)
}

/// A nudge that waited for an unwatched terminal goes to the chat channel the user sets up
/// afterwards (as the ready line advised), as soon as the restarted system's gateway connects:
/// not left waiting for a REPL, and told as sent there.
#[test]
fn a_nudge_that_waited_goes_to_the_channel_set_up_afterwards() {
    let (tmp, _up, ntfy) = waited_then_ntfy(200);
    let dir = tmp.path();
    support::eventually("the waiting nudge on ntfy", || !ntfy.requests("/").is_empty());
    let published = ntfy.requests("/");
    assert_eq!(published.len(), 1, "{published:?}");
    assert!(published[0].body["message"].as_str().unwrap().contains("Call the bank"), "{:?}", published[0].body);
    support::eventually("the outbox emptied", || {
        text(&support::raven(dir, &["outbox", "--json"]).stdout).trim() == "[]"
    });
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let delivered = journal.lines().find(|l| l.contains("\"move\":\"delivered\"")).expect("a delivered line");
    assert!(delivered.contains("\"target\":\"ntfy:raven-test\""), "told as sent to ntfy: {delivered}");
    let feedback = std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    assert!(feedback.contains("dispatched"), "counted once sent: {feedback}");
}

/// The same, with ntfy failing for now: the nudge waits for ntfy (not for a terminal), and
/// `raven outbox` says so with ntfy's error.
#[test]
fn a_nudge_routed_to_a_failing_channel_waits_for_that_channel() {
    let (tmp, _up, ntfy) = waited_then_ntfy(503);
    let dir = tmp.path();
    support::eventually("the try on ntfy", || !ntfy.requests("/").is_empty());
    let waiting = || -> serde_json::Value {
        serde_json::from_str(&text(&support::raven(dir, &["outbox", "--json"]).stdout)).unwrap()
    };
    support::eventually("the nudge waiting for ntfy", || waiting()[0]["text"]["channel"] == "ntfy");
    let entry = &waiting()[0];
    assert_eq!(entry["text"]["chat_id"], "raven-test", "{entry}");
    assert!(entry["last_error"].as_str().unwrap().contains("503"), "ntfy's error: {entry}");
}
