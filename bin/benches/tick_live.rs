//! A real tick in a running supervisor: `raven up` on a data dir with a 1 MB MEMORY.md (a few
//! dated errands far ahead among plain notes) and a 1 MB history, its Sentinel ticked over the
//! control socket as `raven tick` does, which takes the path the supervisor's own tick loop
//! takes (the same actor, the same message). Beside it, in the same run, a Ping over the same
//! connection: what the socket alone costs. Also the bytes the supervisor wrote per tick
//! (`wchar` of `/proc/<pid>/io`: what it handed to `write`, whatever the disk).

#[path = "../tests/e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;

use raven_actors::data_dir::DataDir;
use raven_actors::ipc::ControlClient;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::collections::BTreeMap;
use std::time::Instant;

const WARM_UP: usize = 20;
const TICKS: usize = 200;

fn megabyte(line: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 1 << 20 {
        s.push_str(&line(i));
        s.push('\n');
        i += 1;
    }
    s
}

fn notes(dir: &DataDir) {
    dir.ensure().unwrap();
    let memory = megabyte(|i| {
        if i % 500 == 0 {
            format!("- [ ] errand {i} due: 2030-01-{:02} 10:00", 1 + i % 28)
        } else {
            format!("note {i}: the user mentioned something worth remembering")
        }
    });
    std::fs::write(dir.memory(), memory).unwrap();
    let history =
        megabyte(|i| format!("- 2026-02-{:02} {:02}:{:02} user: message number {i}", 1 + i % 28, i % 24, i % 60));
    std::fs::write(dir.history(), history).unwrap();
}

/// Bytes the process has handed to `write` so far.
fn written(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p) as usize]
}

/// Round trips of `request` in ms, after a warm-up, and the routes the ticks took.
async fn round_trips(client: &mut ControlClient, request: ControlRequest) -> (Vec<f64>, BTreeMap<String, usize>) {
    let (mut times, mut routes) = (Vec::new(), BTreeMap::new());
    for i in 0..WARM_UP + TICKS {
        let t = Instant::now();
        let answer = client.request(request.clone()).await.expect("an answer");
        if i >= WARM_UP {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        match answer {
            ControlResponse::Error { message } => panic!("{message}"),
            ControlResponse::Ticked { route, .. } => *routes.entry(route).or_default() += 1,
            _ => {}
        }
    }
    (times, routes)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    notes(&dir);
    let up = support::Killed(support::up(tmp.path(), "[sentinel]\nenabled = true\n", &[]));
    support::wait_ready(tmp.path());
    let pid = up.0.id();
    let (ticks, pings, bytes) = actix_rt::System::new().block_on(async {
        let mut client = ControlClient::connect(&dir.socket()).await.expect("the control socket");
        let (pings, _) = round_trips(&mut client, ControlRequest::Ping).await;
        let before = written(pid);
        let (ticks, routes) = round_trips(&mut client, ControlRequest::Tick).await;
        let bytes = (written(pid) - before) / (WARM_UP + TICKS) as u64;
        (ticks, pings, (bytes, routes))
    });
    let (bytes, routes) = bytes;
    let (p50, p90, ping) = (percentile(ticks.clone(), 0.5), percentile(ticks, 0.9), percentile(pings, 0.5));
    println!("{:<52} {:>10}", "benchmark", "figure");
    println!("{:<52} {:>7.3} ms   (target <= 1 ms)", "a real tick in `raven up`, 1 MB notes + history, p50", p50);
    println!("{:<52} {:>7.3} ms", "  p90", p90);
    println!("{:<52} {:>7.3} ms", "baseline: a Ping on the same socket, p50", ping);
    println!("{:<52} {:>7} B    (target <= 32 KiB)", "bytes the supervisor wrote per tick", bytes);
    let routes: Vec<String> = routes.iter().map(|(r, n)| format!("{r} {n}")).collect();
    println!("{:<52} {}", "the ticks' routes", routes.join(", "));
}
