//! The gateway under clients that hold connections: a slow request head does not delay a
//! normal POST and is closed after `header_timeout_s`; a body that stops coming is a 408 after
//! `body_timeout_s`; a flood of idle connections past `max_connections` neither stops the
//! gateway nor makes it think its supervisor is gone, and it serves again once they time out;
//! at the cap a complete request is served, the oldest idle connection closed to make room
//! (never one whose request is being served).

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::{http, Killed};

const SECRET: &str = "s3cret";

fn up(dir: &std::path::Path) -> Killed {
    let config =
        "[gateway]\nlisten = \"127.0.0.1:0\"\nheader_timeout_s = 1\nbody_timeout_s = 1\nmax_connections = 32\n\
                  [delivery]\njsonl_path = \"out.jsonl\"\n";
    let child = Killed(support::up(dir, config, &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    child
}

fn post(addr: &str) -> (u16, String) {
    http(addr, "POST", "/inbound", Some(SECRET), br#"{"channel": "jsonl", "chat_id": "ann", "text": "hello"}"#)
}

/// Whether the server has closed `s` (EOF or a reset), reading whatever it answered.
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
    let mut buf = [0u8; 1024];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => closed(s),
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[test]
fn a_slow_head_does_not_delay_a_normal_post_and_is_closed_in_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = up(dir);
    let (addr, _) = support::gateway(dir);

    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /inbound HTTP/1.1\r\nhost: x\r\ncontent-le").unwrap();
    let (code, body) = post(&addr);
    assert_eq!(code, 200, "{body}");
    assert!(!closed(&mut slow), "the normal POST was answered while the slow head was still open");
    support::eventually("the slow head to be closed", || closed(&mut slow));

    // A body that stops coming: 408, as JSON.
    let mut s = TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /inbound HTTP/1.1\r\nhost: x\r\nx-raven-secret: {SECRET}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"chat"
    );
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\""), "{answer}");
}

#[test]
fn a_flood_of_idle_connections_neither_stops_the_gateway_nor_orphans_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = up(dir);
    let (addr, pid) = support::gateway(dir);

    let mut flood: Vec<TcpStream> = (0..200).filter_map(|_| TcpStream::connect(&addr).ok()).collect();
    for s in &mut flood {
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
    }
    // Past the cap the oldest idle connections make room for the newer ones; the rest time
    // out on their heads.
    support::eventually("every idle connection to be closed", || flood.iter_mut().all(closed));
    let (code, body) = post(&addr);
    assert_eq!(code, 200, "{body}");
    let (_, now) = support::gateway(dir);
    assert_eq!(now, pid, "the same gateway serves: it neither exited nor was replaced");
    let log = std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    assert!(!log.contains("no supervisor for too long"), "{log}");
}

#[test]
fn a_gateway_out_of_descriptors_does_not_take_its_supervisor_for_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config =
        "[gateway]\nlisten = \"127.0.0.1:0\"\nheader_timeout_s = 30\nmax_connections = 1000\norphan_timeout_s = 1\n\
                  [delivery]\njsonl_path = \"out.jsonl\"\n";
    support::write_config(dir, config);
    // Few descriptors for the supervisor and the gateway it starts, so a flood exhausts them.
    let log = std::fs::File::create(dir.join("up.stderr")).unwrap();
    let child = std::process::Command::new("sh")
        .args(["-c", "ulimit -n 128 && exec \"$0\" \"$@\""])
        .arg(support::raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .arg("up")
        .env("RAVEN_GATEWAY_SECRET", SECRET)
        .env("TZ", "UTC")
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let _up = Killed(child);
    support::wait_ready(dir);
    let (addr, pid) = support::gateway(dir);

    // More than the gateway's descriptors; a connect the full backlog does not take gives up.
    let to: std::net::SocketAddr = addr.parse().unwrap();
    let flood: Vec<TcpStream> =
        (0..200).filter_map(|_| TcpStream::connect_timeout(&to, Duration::from_millis(100)).ok()).collect();
    assert!(flood.len() > 128, "{} connections", flood.len());
    // Twice the orphan timeout, with the gateway's descriptors used up all along.
    let until = std::time::Instant::now() + Duration::from_millis(2500);
    while std::time::Instant::now() < until {
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "the gateway left");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(flood);
    support::eventually("a POST to be served", || post(&addr).0 == 200);
    let (_, now) = support::gateway(dir);
    assert_eq!(now, pid, "the same gateway serves");
}

#[test]
fn at_the_cap_a_complete_request_is_served_and_the_oldest_idle_connection_makes_room() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config =
        "[gateway]\nlisten = \"127.0.0.1:0\"\nheader_timeout_s = 30\nbody_timeout_s = 30\nmax_connections = 8\n\
                  [delivery]\njsonl_path = \"out.jsonl\"\n";
    let _up = Killed(support::up(dir, config, &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    let (addr, _) = support::gateway(dir);

    // The oldest connection has a complete head and a body still coming: it is being served.
    let mut serving = TcpStream::connect(&addr).unwrap();
    let head =
        format!("POST /inbound HTTP/1.1\r\nhost: x\r\nx-raven-secret: {SECRET}\r\ncontent-length: 100\r\n\r\n{{");
    serving.write_all(head.as_bytes()).unwrap();
    // A request answered after it was sent: the gateway has read that head by now.
    assert_eq!(post(&addr).0, 200);
    // Then idle ones fill the other slots, each holding half a head.
    let mut idle: Vec<TcpStream> = (0..7).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    for s in &mut idle {
        s.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
    }
    let (code, body) = post(&addr);
    assert_eq!(code, 200, "a complete request at the cap is served: {body}");
    support::eventually("the oldest idle connection to be closed", || closed(&mut idle[0]));
    assert!(!closed(&mut serving), "the connection being served is kept");
    assert!(!idle[1..].iter_mut().any(closed), "only the oldest idle connection made room");
}
