//! Bytes written per cron fire by a running `raven up` and its gateway, everything included
//! (the claim, the gate's record, the message queued for a terminal nobody watches, its retries,
//! the write-back, the journal and the log), read from `/proc/<pid>/io`: with 1,000 dead letters
//! in the outbox, next to the same load with none in the same run. 20 jobs fire every 2 s.

#[path = "../tests/e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;
#[path = "common/waiting.rs"]
mod waiting;

use std::path::Path;
use std::time::{Duration, Instant};

const JOBS: usize = 20;
const WARM_UP: Duration = Duration::from_secs(5);
const MEASURED: Duration = Duration::from_secs(20);

/// Fires every second, retries every second, and no strike pauses a job.
const CONFIG: &str = "[cron]\nmax_sleep_s = 1\nstrike_min_gap_s = 0\n[delivery]\noutbox_backoff_s = 1\n";

/// `write_bytes` (to disk, page-sized) and `wchar` (through write(2)) of `pid`.
fn io(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).unwrap().trim().parse::<u64>().unwrap();
    (field("write_bytes:"), field("wchar:"))
}

/// Every job's runs so far.
fn fires(dir: &Path) -> u64 {
    let out = support::raven(dir, &["cron", "list", "--json"]);
    let jobs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    jobs.iter().map(|j| j["state"]["runs"].as_u64().unwrap_or(0)).sum()
}

/// KiB to disk and through write(2) per fire, and the fires measured.
fn per_fire(dir: &Path) -> (f64, f64, u64) {
    // Nobody watches the terminal: each reminder waits in the outbox.
    let up = support::Killed(support::up(dir, CONFIG, &[("RAVEN_CLI_ALWAYS", "0")]));
    support::wait_ready(dir);
    let (_, gateway) = support::gateway(dir);
    for i in 0..JOBS {
        let text = format!("soak job {i}");
        let added = support::raven(dir, &["cron", "add", &text, "--every", "2s", "--to", "cli:local"]);
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    }
    std::thread::sleep(WARM_UP);
    let both = || {
        let ((sd, sc), (gd, gc)) = (io(up.0.id()), io(gateway));
        (sd + gd, sc + gc)
    };
    let (start, f0, t0) = (both(), fires(dir), Instant::now());
    std::thread::sleep(MEASURED.saturating_sub(t0.elapsed()));
    let (end, f1) = (both(), fires(dir));
    let fired = f1 - f0;
    assert!(fired >= (JOBS as u64) * 5, "only {fired} fires measured");
    let kib = |bytes: u64| bytes as f64 / 1024.0 / fired as f64;
    (kib(end.0 - start.0), kib(end.1 - start.1), fired)
}

fn main() {
    let empty = tempfile::tempdir().unwrap();
    let full = tempfile::tempdir().unwrap();
    waiting::fill_dead(full.path(), 1_000);
    let base = per_fire(empty.path());
    let loaded = per_fire(full.path());
    let dead = support::raven(full.path(), &["outbox", "--dead", "--json"]);
    let dead: Vec<serde_json::Value> = serde_json::from_slice(&dead.stdout).unwrap();
    assert!(dead.len() >= 1_000, "the dead letters are there: {}", dead.len());
    println!("{:<52} {:>10}", "benchmark", "figure");
    let row = |label: &str, (disk, calls, fired): (f64, f64, u64)| {
        println!("{label:<52} {disk:>6.1} KiB  ({calls:.1} KiB through write(2); {fired} fires)");
    };
    row("a cron fire, 1,000 dead letters: written to disk", loaded);
    row("baseline: the same fires, no dead letter", base);
    println!("{:<52} {:>10.2}", "ratio", loaded.0 / base.0);
    println!("target: <= 32 KiB a fire whatever has accumulated");
}
