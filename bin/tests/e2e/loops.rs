//! A panic injected into each long-running loop of `raven up` (`RAVEN_FAULT=loop:<name>:1`):
//! the loop is started again, `raven status` counts the restart, and the loop's work goes on
//! (the next tick, fire, heartbeat, poll, drain or retry reaches its actor).

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

/// Every loop, the actor its work reaches, and the config that makes it run every second.
const LOOPS: [(&str, &str, &str); 6] = [
    ("tick", "ContextAssembler", "[sentinel]\nenabled = true\ninterval_s = 1\n"),
    ("cron", "Cron", "[cron]\nmax_sleep_s = 1\n"),
    ("heartbeat", "Heartbeat", "[heartbeat]\ninterval_s = 1\n"),
    ("defer", "DeferManager", "[executor]\ndefer_poll_s = 1\n"),
    ("triggers", "SentinelRunner", "[sentinel]\ntrigger_poll_s = 1\n[executor]\ndefer_poll_s = 3600\n"),
    ("outbox", "DeliveryHub", "[delivery]\noutbox_backoff_s = 1\n"),
];

/// A row of `raven status`: the `received` and `restarts` columns of `name`.
fn row(dir: &Path, name: &str) -> Option<(u64, u64)> {
    let out = support::raven(dir, &["status"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let cols: Vec<&str> =
        text.lines().find(|l| l.split_whitespace().next() == Some(name))?.split_whitespace().collect();
    Some((cols.get(1)?.parse().ok()?, cols.get(5)?.parse().ok()?))
}

fn check(name: &'static str, actor: &'static str, config: &'static str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fault = format!("loop:{name}:1");
    let _up = support::Killed(support::up(dir, config, &[("RAVEN_FAULT", fault.as_str())]));
    support::wait_ready(dir);
    let meter = format!("loop:{name}");
    support::eventually(&format!("{meter} to restart"), || row(dir, &meter).is_some_and(|(_, r)| r >= 1));
    let (before, _) = row(dir, actor).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (now, _) = row(dir, actor).unwrap();
        if now >= before + 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{name}: {actor} got no more work after the restart ({before} → {now})");
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = std::fs::read_to_string(dir.join("up.stderr")).unwrap();
    assert!(log.contains(&format!("fault injected in loop {name}")), "{name}: {log}");
}

#[test]
fn a_panic_injected_into_each_loop_restarts_it_and_its_work_goes_on() {
    let runs: Vec<_> = LOOPS.iter().map(|&(n, a, c)| std::thread::spawn(move || check(n, a, c))).collect();
    for r in runs {
        r.join().unwrap();
    }
}
