//! The fault suite, part one: a panic injected into each actor of the design card through the
//! test-only fault switch (`RAVEN_FAULT=<actor>:<n>`), in a real `raven up`. The actor
//! restarts, the next tick completes, and `raven status` shows the restart; a fault that
//! keeps firing (`<actor>:<n>+`) is reported as a crash loop, and the rest of the engine
//! keeps serving.

mod support;

use std::path::Path;

const CONFIG: &str = "[gateway]\nenabled = false\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
                      [delivery]\njsonl_path = \"out.jsonl\"\n[executor]\ndefer_poll_s = 1\n";

/// (restarts, state) of `actor` in `raven status`.
fn row(dir: &Path, actor: &str) -> Option<(u64, String)> {
    let status = support::wait_ready(dir);
    let cols: Vec<String> = status
        .lines()
        .find(|l| l.split_whitespace().next() == Some(actor))?
        .split_whitespace()
        .map(Into::into)
        .collect();
    Some((cols[5].parse().ok()?, cols.last()?.clone()))
}

/// Requests that reach every actor: a tick (runner, assembler, policy, planner), a user turn
/// (spine, injector), a send (hub), a status (cron, heartbeat); the loops reach the rest.
fn traffic(dir: &Path, n: usize) {
    let _ = support::raven(dir, &["tick"]);
    let _ = support::raven(dir, &["say", &format!("hello {n}")]);
    let _ = support::raven(dir, &["send", "jsonl:me", &format!("ping {n}")]);
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = support::raven(dir, args);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "raven {args:?}: {text}");
    text
}

#[test]
fn a_panic_in_each_actor_restarts_it_and_the_next_tick_completes() {
    for actor in support::ACTORS {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let _up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_FAULT", &format!("{actor}:1"))]));
        support::wait_ready(dir);
        let mut n = 0;
        support::eventually(&format!("{actor} to restart"), || {
            n += 1;
            traffic(dir, n);
            row(dir, actor).is_some_and(|(restarts, state)| restarts == 1 && state == "ok")
        });
        let tick = ok(dir, &["tick"]);
        assert!(tick.contains("route:"), "{actor}: {tick}");
        assert!(ok(dir, &["say", "still there?"]).contains("No language model"), "{actor}");
    }
}

#[test]
fn a_fault_that_keeps_firing_is_reported_as_a_crash_loop_and_the_rest_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_FAULT", "DeliveryHub:1+")]));
    support::wait_ready(dir);
    let mut n = 0;
    support::eventually("the crash loop", || {
        n += 1;
        let _ = support::raven(dir, &["send", "jsonl:me", &format!("ping {n}")]);
        row(dir, "DeliveryHub").is_some_and(|(_, state)| state == "CRASH-LOOP")
    });
    let sent = support::raven(dir, &["send", "jsonl:me", "one more"]);
    assert!(!sent.status.success(), "a crash-looping hub does not pretend to deliver");
    assert!(
        String::from_utf8_lossy(&sent.stderr).contains("crash-looping"),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(ok(dir, &["tick"]).contains("route:"), "the tick still completes");
    let metrics = ok(dir, &["metrics"]);
    assert!(metrics.contains("raven_actor_crash_loop{actor=\"DeliveryHub\"} 1"), "{metrics}");
}

/// `raven <args>` with the file-size limit at `blocks` (a full disk for every write past it;
/// SIGXFSZ ignored, so the write fails with an error instead of killing the process).
fn on_a_full_disk(dir: &Path, blocks: u32, args: &[&str]) -> std::process::Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "trap '' XFSZ; ulimit -f {blocks}; exec '{}' --data-dir '{}' {}",
        support::raven_bin().display(),
        dir.display(),
        quoted.join(" ")
    );
    std::process::Command::new("sh").args(["-c", &script]).env_remove("RAVEN_HOME").output().unwrap()
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_every_file_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Files bigger than the limit: every rewrite of them fails.
    for i in 0..60 {
        ok(dir, &["cron", "add", "--in", "1h", &format!("job number {i}, padded to make the file grow")]);
        let _ = support::raven(dir, &["send", "telegram:42", &format!("queued message {i}, padded as well")]);
    }
    let (jobs, state) = (dir.join("cron/jobs.json"), dir.join("sentinel/state.json"));
    let before = (std::fs::read(&jobs).unwrap(), std::fs::read(&state).unwrap());
    assert!(before.0.len() > 16 * 1024 && before.1.len() > 16 * 1024, "both files outgrow the limit");

    let add = on_a_full_disk(dir, 16, &["cron", "add", "--in", "2h", "one more"]);
    assert_eq!(add.status.code(), Some(2));
    let err = String::from_utf8_lossy(&add.stderr);
    assert!(err.contains("jobs.json") && err.contains("File too large"), "{err}");
    let send = on_a_full_disk(dir, 16, &["send", "telegram:42", "and another"]);
    assert_eq!(send.status.code(), Some(2));
    let err = String::from_utf8_lossy(&send.stderr);
    assert!(err.contains("outbox failed") && err.contains("File too large"), "{err}");

    assert_eq!((std::fs::read(&jobs).unwrap(), std::fs::read(&state).unwrap()), before, "no file was torn");
    let stray: Vec<_> = std::fs::read_dir(dir.join("cron"))
        .unwrap()
        .chain(std::fs::read_dir(dir.join("sentinel")).unwrap())
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(stray.is_empty(), "no temp file left behind: {stray:?}");
    assert!(ok(dir, &["cron", "list"]).contains("job number 59"), "and the data is still all there");
}
