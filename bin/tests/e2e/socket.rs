//! The control socket against hostile local clients. A supervisor started with a limit of 256
//! open files and a client that opens 300 connections and says nothing: the supervisor caps
//! what it holds (the rest wait in the listen queue), closes the silent ones after the
//! handshake timeout, and answers a `raven status` queued behind them while they are still
//! open, and after; a second `raven up` is still refused. And a client that pipelines requests it never
//! reads cannot grow the supervisor.

use crate::support;

use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn the_socket_accepts_again_after_a_client_exhausted_the_supervisor_s_descriptors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, "[gateway]\nenabled = false\n");
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

    // More connections than the supervisor holds: with every slot taken it accepts no more, and
    // the rest wait in the listen queue.
    let socket = dir.join("raven.sock");
    let held: Vec<UnixStream> = (0..300).map(|_| UnixStream::connect(&socket).expect("connect")).collect();
    let fds = || std::fs::read_dir(format!("/proc/{}/fd", _up.0.id())).map(|d| d.count()).unwrap_or(0);
    for _ in 0..100 {
        assert!(fds() < 250, "the supervisor holds {} descriptors: it took every connection", fds());
        std::thread::sleep(Duration::from_millis(5));
    }
    // The silent ones are closed after the handshake timeout and the queued ones served in
    // turn: a status asked behind them is answered while the client still holds them.
    let status = support::raven(dir, &["status"]);
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    drop(held);

    support::eventually("raven status answers again", || support::raven(dir, &["status"]).status.success());
    let second = support::raven(dir, &["up"]);
    assert!(!second.status.success(), "a second supervisor is still refused");
}

#[test]
fn a_client_pipelining_requests_it_never_reads_cannot_grow_the_supervisor() {
    use raven_proto::control::{ClientFrame, ControlRequest};
    use raven_proto::wire::{encode_frame, Hello, MAX_FRAME};
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let up = support::Killed(support::up(dir, "[gateway]\nenabled = false\n", &[]));
    support::wait_ready(dir);
    let before = support::status_kib(up.0.id(), "VmRSS:");

    let mut s = UnixStream::connect(dir.join("raven.sock")).unwrap();
    s.write_all(&encode_frame(&Hello::new("pipelining test"), MAX_FRAME).unwrap()).unwrap();
    // Written in batches; once the supervisor stops reading (it serves a bounded number at a
    // time and this client reads nothing), the writes block and time out.
    s.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut sent = 0u64;
    'writing: while sent < 500_000 {
        let mut batch = Vec::new();
        for _ in 0..1_000 {
            sent += 1;
            batch.extend(encode_frame(&ClientFrame { id: sent, request: ControlRequest::Status }, MAX_FRAME).unwrap());
        }
        if s.write_all(&batch).is_err() {
            break 'writing;
        }
    }
    let after = support::status_kib(up.0.id(), "VmRSS:");
    eprintln!("pipelined {sent} requests unread: supervisor RSS {before} kB before, {after} kB after");
    assert!(after < 100 * 1024, "RSS {after} kB after {sent} unread requests");
    assert!(support::raven(dir, &["status"]).status.success(), "others are still served");
    drop(s);
}
