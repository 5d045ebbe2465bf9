//! `raven up` as a real process: ready on a fresh data dir, `raven status` lists its
//! actors, a second one refuses with the pid, SIGTERM stops it cleanly, and after a SIGKILL
//! the stale socket is replaced by the next start.

use crate::support;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn up(dir: &Path) -> Child {
    // A free port for the gateway, so parallel tests (and a busy 8787) do not collide.
    support::up(dir, "", &[])
}

fn wait_ready(dir: &Path) -> String {
    support::wait_ready(dir)
}

/// The pid the gateway wrote into `gateway.addr`.
fn wait_for_gateway_pid(dir: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(dir.join("gateway.addr"))
            .ok()
            .and_then(|l| l.trim().split_once(' ').and_then(|(_, p)| p.parse().ok()))
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no gateway.addr");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "raven up did not exit");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn up_serves_status_refuses_a_second_and_stops_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut first = up(dir);
    let status = wait_ready(dir);
    for actor in support::ACTORS.iter().chain(&["Spine"]) {
        assert!(status.contains(actor), "{actor} missing from:\n{status}");
    }
    assert!(status.contains(&format!("supervisor pid {}", first.id())), "{status}");

    // A user message goes to the running supervisor over the socket and gets its reply.
    let said = support::raven(dir, &["say", "/remind in 10m stretch"]);
    assert!(said.status.success(), "{}", String::from_utf8_lossy(&said.stderr));
    assert!(
        String::from_utf8_lossy(&said.stdout).starts_with("Reminder set: “stretch”"),
        "{}",
        String::from_utf8_lossy(&said.stdout)
    );
    assert!(std::fs::read_to_string(dir.join("cron/jobs.json")).unwrap().contains("stretch"));
    let refused = support::raven(dir, &["say", "/cancel nosuch"]);
    assert_eq!(refused.status.code(), Some(2), "a refusal through the supervisor exits 2 too");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("There is no reminder nosuch"));
    let metrics = support::raven(dir, &["metrics"]);
    let text = String::from_utf8_lossy(&metrics.stdout);
    assert!(text.contains("# TYPE raven_actor_mailbox_depth gauge"), "{text}");
    assert!(text.contains("raven_actor_messages_received_total{actor=\"NudgeInjector\"}"), "{text}");

    let second = support::raven(dir, &["up"]);
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&format!("already running (pid {})", first.id())), "{err}");

    let gateway = wait_for_gateway_pid(dir);
    let term = Command::new("kill").args(["-TERM", &first.id().to_string()]).status().unwrap();
    assert!(term.success());
    assert!(wait_exit(&mut first).success(), "SIGTERM exits 0");
    assert!(!dir.join("raven.sock").exists(), "the socket was closed");
    // Nothing names a process that is gone: the gateway's address file goes with it.
    support::eventually("the gateway to stop", || !alive(gateway));
    assert!(!dir.join("gateway.addr").exists(), "gateway.addr was left after the stop");
}

/// A running process: a zombie (dead, not yet reaped by whoever adopted it) is not.
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // `pid (comm) S ...`: the state follows the last ')'.
    stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
}

#[test]
fn after_a_sigkill_the_stale_socket_is_replaced_and_the_gateway_adopted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut first = up(dir);
    wait_ready(dir);
    let gateway = wait_for_gateway_pid(dir);
    first.kill().unwrap(); // SIGKILL: nothing is cleaned up
    first.wait().unwrap();
    assert!(dir.join("raven.sock").exists(), "a killed supervisor leaves its socket file");
    assert!(alive(gateway), "its gateway outlives it, for the next supervisor");
    let mut again = up(dir);
    let status = wait_ready(dir);
    assert!(status.contains(&format!("supervisor pid {}", again.id())), "{status}");
    assert!(status.contains(&format!("gateway pid {gateway}")), "adopted, not doubled: {status}");
    // Stopping the new supervisor stops the adopted gateway too.
    assert!(Command::new("kill").args(["-TERM", &again.id().to_string()]).status().unwrap().success());
    assert!(wait_exit(&mut again).success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(gateway) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!alive(gateway), "the adopted gateway was stopped");
}

#[test]
fn an_orphaned_gateway_leaves_when_no_supervisor_comes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut first = support::up(dir, "[gateway]\nlisten = \"127.0.0.1:0\"\norphan_timeout_s = 1\n", &[]);
    wait_ready(dir);
    let gateway = wait_for_gateway_pid(dir);
    first.kill().unwrap();
    first.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(gateway) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!alive(gateway), "no orphan holds the port for ever");
}

#[test]
fn a_deleted_socket_comes_back_and_a_second_supervisor_is_still_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _first = support::Killed(up(dir));
    wait_ready(dir);
    std::fs::remove_file(dir.join("raven.sock")).unwrap();
    // Whatever the socket says, the lock says a supervisor runs: a second one is refused.
    let second = support::raven(dir, &["up"]);
    assert!(!second.status.success(), "a second supervisor started");
    let said = String::from_utf8_lossy(&second.stderr).into_owned();
    assert!(said.contains("already running (pid"), "{said}");
    support::eventually("the socket to come back", || support::raven(dir, &["status"]).status.success());
}
