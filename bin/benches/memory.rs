//! The idle supervisor's resident memory, read from `/proc/<pid>/status`: empty, and with
//! 10,000 messages waiting in the outbox (imported at its start from an earlier version's
//! `outbox.json`, the worst case: that parse, and the retry pass over the 10,000 once the
//! gateway's outlets are up, are the most the process ever holds). Each is read a few seconds
//! after ready and once start-up has settled (35 s), with the anonymous part (what the process
//! wrote) apart from the pages mapped from its binary and libc.

#[path = "../tests/e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;
#[path = "common/waiting.rs"]
mod waiting;

use std::path::Path;
use std::time::Duration;
use waiting::{closed_webhook, fill_outbox};

/// `VmRSS` and `RssAnon` of `pid`, in MB.
fn resident(pid: u32) -> (f64, f64) {
    let mb = |key| support::status_kib(pid, key) as f64 / 1024.0;
    (mb("VmRSS:"), mb("RssAnon:"))
}

/// The supervisor's (and its gateway's) memory 3 s after ready and 35 s after.
fn idle(dir: &Path) -> [(f64, f64); 3] {
    let up = support::Killed(support::up(dir, &closed_webhook(), &[]));
    support::wait_ready(dir);
    let (_, gateway) = support::gateway(dir);
    std::thread::sleep(Duration::from_secs(3));
    let early = resident(up.0.id());
    std::thread::sleep(Duration::from_secs(32));
    [early, resident(up.0.id()), resident(gateway)]
}

fn main() {
    let empty = tempfile::tempdir().unwrap();
    let full = tempfile::tempdir().unwrap();
    fill_outbox(full.path());
    let rows = [("empty", idle(empty.path())), ("10,000 waiting", idle(full.path()))];
    println!("{:<52} {:>10}", "benchmark", "figure");
    for (what, [early, settled, gateway]) in rows {
        let row = |label: String, (rss, anon): (f64, f64)| {
            println!("{label:<52} {rss:>7.1} MB  ({anon:.1} MB anonymous)");
        };
        row(format!("idle supervisor RSS, {what}, 3 s after ready"), early);
        row(format!("idle supervisor RSS, {what}, settled (35 s)"), settled);
        row(format!("its gateway's RSS, {what}, settled"), gateway);
    }
    println!("target: idle <= 12 MB; <= 16 MB with 10,000 waiting");
}
