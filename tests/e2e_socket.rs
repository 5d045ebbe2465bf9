//! The control socket against a local client that takes every descriptor: a supervisor
//! started with a limit of 256 open files, a client that opens connections until the
//! supervisor cannot accept more, then closes them. The supervisor keeps accepting after:
//! `raven status` answers, and a second `raven up` is still refused.

mod support;

use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_socket_accepts_again_after_a_client_exhausted_the_supervisor_s_descriptors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("config.toml"), "[gateway]\nenabled = false\n").unwrap();
    let log = std::fs::File::create(dir.join("up.stderr")).unwrap();
    let up = Command::new("prlimit")
        .arg("--nofile=256:256")
        .arg(support::raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .arg("up")
        .env_remove("RAVEN_HOME")
        .env("TZ", "UTC")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("prlimit (util-linux) starts raven up");
    let _up = support::Killed(up);
    support::wait_ready(dir);

    // More connections than the supervisor has descriptors: it accepts until it has none
    // left; the rest wait in the listen queue.
    let socket = dir.join("raven.sock");
    let held: Vec<UnixStream> = (0..300).map(|_| UnixStream::connect(&socket).expect("connect")).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let stderr = || std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    while !stderr().contains("cannot accept") {
        assert!(Instant::now() < deadline, "the supervisor never ran out of descriptors: {}", stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(held);

    support::eventually("raven status answers again", || support::raven(dir, &["status"]).status.success());
    let second = support::raven(dir, &["up"]);
    assert!(!second.status.success(), "a second supervisor is still refused");
}
