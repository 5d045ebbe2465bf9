//! A real `raven up`, left idle after start-up with every loop running fast (a tick every
//! second), writes nothing: no file under the data dir is written, replaced or created; and
//! it and its gateway give back the memory start-up took.

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every file under `root` but the test's own capture of stderr: (inode, mtime ns, length).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, i64, u64)> {
    let kept = |p: &PathBuf| p.file_name().is_some_and(|n| n != "up.stderr");
    let stat = |p: PathBuf| {
        let m = std::fs::metadata(&p).unwrap();
        (p, (m.ino(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.len()))
    };
    support::files_under(root).into_iter().filter(kept).map(stat).collect()
}

#[test]
fn an_idle_supervisor_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[sentinel]\nenabled = true\ninterval_s = 1\n[cron]\nmax_sleep_s = 1\n[executor]\ndefer_poll_s = 1\n\
                  [delivery]\noutbox_backoff_s = 1\n";
    let _up = support::Killed(support::up(dir, config, &[]));
    support::wait_ready(dir);
    support::gateway(dir);
    // Start-up writes (the first tick's attention.md, the day's guards); give it its ticks.
    std::thread::sleep(Duration::from_secs(2));
    let before = snapshot(dir);
    std::thread::sleep(Duration::from_secs(4));
    let after = snapshot(dir);
    let changed: Vec<_> = after.iter().filter(|(p, v)| before.get(*p) != Some(v)).map(|(p, _)| p).collect();
    assert!(changed.is_empty(), "written while idle: {changed:?}");
    let status = String::from_utf8_lossy(&support::raven(dir, &["status"]).stdout).into_owned();
    assert!(status.contains("loop:tick"), "the loops run: {status}");
}

#[test]
fn an_idle_supervisor_and_its_gateway_give_back_what_start_up_took() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let up = support::Killed(support::up(dir, "", &[]));
    support::wait_ready(dir);
    let (_, gateway) = support::gateway(dir);
    for (who, pid) in [("the supervisor", up.0.id()), ("the gateway", gateway)] {
        // Its peak is start-up's; idle, it holds well under half of it.
        let below_half = || support::status_kib(pid, "VmRSS:") * 2 < support::status_kib(pid, "VmHWM:");
        support::eventually_within(
            &format!("{who} to give back memory"),
            Duration::from_secs(15),
            Duration::from_millis(50),
            below_half,
        );
    }
}
