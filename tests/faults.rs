//! The fault suite, part one: a panic injected into each actor of the design card through the
//! test-only fault switch (`RAVEN_FAULT=<actor>:<n>`), in a real `raven up`. The actor
//! restarts, the next tick completes, and `raven status` shows the restart; a fault that
//! keeps firing (`<actor>:<n>+`) is reported as a crash loop, and the rest of the engine
//! keeps serving.

mod support;

use std::path::Path;

const CONFIG: &str = "[gateway]\nenabled = false\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
                      [delivery]\njsonl_path = \"out.jsonl\"\n[executor]\ndefer_poll_s = 1\n";

const ACTORS: [&str; 9] = [
    "NudgePolicy",
    "Planner",
    "ContextAssembler",
    "SentinelRunner",
    "DeliveryHub",
    "NudgeInjector",
    "DeferManager",
    "Cron",
    "Heartbeat",
];

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
    for actor in ACTORS {
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
