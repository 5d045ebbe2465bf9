//! `raven up` with its `raven gateway` child, over real HTTP on 127.0.0.1: an inbound message
//! gets its reply as the HTTP answer (not also through an outlet), and a reminder no outlet
//! could deliver is refused in plain words; a wrong secret gets 401 and no turn; a
//! 10 MiB body gets 413; a SIGKILLed gateway is back within 2 s and serving.

use crate::support;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const SECRET: &str = "test-secret";

fn up(dir: &Path) -> Child {
    support::up(dir, "[delivery]\njsonl_path = \"outbox.jsonl\"\n", &[("RAVEN_GATEWAY_SECRET", SECRET)])
}

/// The gateway's `(address, pid)` once it listens and the supervisor answers, other than `not`.
fn gateway(dir: &Path, not: Option<u32>) -> (String, u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(line) = std::fs::read_to_string(dir.join("gateway.addr")) {
            if let Some((addr, pid)) = line.trim().split_once(' ') {
                let pid: u32 = pid.parse().unwrap();
                if Some(pid) != not && TcpStream::connect(addr).is_ok() && dir.join("raven.sock").exists() {
                    return (addr.to_owned(), pid);
                }
            }
        }
        assert!(Instant::now() < deadline, "the gateway never came up");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn http(addr: &str, method: &str, path: &str, secret: Option<&str>, body: &[u8]) -> (u16, String) {
    support::http(addr, method, path, secret, body)
}

#[test]
fn inbound_messages_metrics_secrets_limits_and_a_killed_gateway() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut supervisor = up(dir);
    let (addr, pid) = gateway(dir, None);

    let (code, body) = http(
        &addr,
        "POST",
        "/inbound",
        Some(SECRET),
        br#"{"channel": "jsonl", "chat_id": "ann", "text": "hello there"}"#,
    );
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("No language model is configured"), "{body}");
    let out = std::fs::read_to_string(dir.join("outbox.jsonl")).unwrap_or_default();
    assert!(
        !out.contains("No language model"),
        "the reply is the HTTP answer only, not sent through the outlet too: {out}"
    );

    let (code, body) =
        http(&addr, "POST", "/inbound", Some("wrong"), br#"{"channel": "jsonl", "chat_id": "bob", "text": "hi"}"#);
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("\"error\""), "a JSON error: {body}");
    assert!(!dir.join("sessions/jsonl_bob.jsonl").exists(), "no turn ran");

    let (code, _) = http(&addr, "POST", "/inbound", Some(SECRET), &vec![b'x'; 10 << 20]);
    assert_eq!(code, 413);
    let (code, body) = http(&addr, "POST", "/inbound", Some(SECRET), b"not json");
    assert_eq!(code, 400, "{body}");

    // Metrics are behind the secret (`gateway.metrics_public` opens them).
    let (code, _) = http(&addr, "GET", "/metrics", None, b"");
    assert_eq!(code, 401);
    let (code, body) = http(&addr, "GET", "/metrics", Some(SECRET), b"");
    assert_eq!(code, 200);
    assert!(body.contains("raven_actor_messages_received_total{actor=\"DeliveryHub\"}"), "{body}");

    // SIGKILL the gateway: the supervisor restarts it within 2 s, and it serves.
    let killed_at = Instant::now();
    assert!(Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
    let (addr, new_pid) = gateway(dir, Some(pid));
    assert!(killed_at.elapsed() < Duration::from_secs(2), "restarted in {:?}", killed_at.elapsed());
    assert_ne!(new_pid, pid);
    let (code, body) = http(
        &addr,
        "POST",
        "/inbound",
        Some(SECRET),
        br#"{"channel": "jsonl", "chat_id": "ann", "text": "still there?"}"#,
    );
    assert_eq!(code, 200, "{body}");

    assert!(Command::new("kill").args(["-TERM", &supervisor.id().to_string()]).status().unwrap().success());
    assert!(supervisor.wait().unwrap().success());
}

fn send(dir: &Path, text: &str) -> std::process::Output {
    support::raven(dir, &["send", "jsonl:me", text])
}

#[test]
fn the_gateway_hosts_the_outbound_outlets_and_the_outbox_keeps_what_it_could_not_take() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\nrestart_backoff_ms = 3000\n\
                  [delivery]\njsonl_path = \"outbox.jsonl\"\noutbox_backoff_s = 1\n";
    let mut supervisor = support::up(dir, config, &[("RAVEN_GATEWAY_SECRET", SECRET)]);
    let (_, pid) = gateway(dir, None);
    // Delivered once the gateway has taken its outlets over.
    support::eventually("the gateway to host jsonl", || send(dir, "through the gateway").status.success());
    // With the gateway dead (and not back for 3 s) the supervisor cannot deliver to jsonl
    // itself: the message waits in its outbox, and goes out once a new gateway hosts it.
    assert!(Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap().success());
    support::eventually("the supervisor to see the gateway gone", || {
        let out = send(dir, "while the gateway is down");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        !out.status.success() && err.contains("kept in the outbox") && err.contains("gateway")
    });
    let written = || std::fs::read_to_string(dir.join("outbox.jsonl")).unwrap_or_default();
    assert!(!written().contains("while the gateway is down"));
    let (_, new_pid) = gateway(dir, Some(pid));
    assert_ne!(new_pid, pid);
    support::eventually("the outbox to drain through the new gateway", || {
        written().contains("while the gateway is down")
    });
    assert_eq!(written().matches("while the gateway is down").count(), 1, "once: {}", written());
    assert!(Command::new("kill").args(["-TERM", &supervisor.id().to_string()]).status().unwrap().success());
    assert!(supervisor.wait().unwrap().success());
}

#[test]
fn every_answer_is_json_and_health_says_who_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let supervisor = support::Killed(up(dir));
    let (addr, _) = gateway(dir, None);
    let (code, body) = http(&addr, "GET", "/nowhere", None, b"");
    assert_eq!(code, 404);
    assert!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].is_string(), "{body}");
    let (code, body) = http(&addr, "GET", "/inbound", Some(SECRET), b"");
    assert_eq!(code, 405);
    assert!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].is_string(), "{body}");
    let (code, body) = http(&addr, "POST", "/inbound", Some(SECRET), &vec![b'x'; 10 << 20]);
    assert_eq!(code, 413);
    assert!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].is_string(), "{body}");
    let (code, body) = http(&addr, "GET", "/health", None, b"");
    assert_eq!(code, 200, "{body}");
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["supervisor"], "ok", "{body}");
    drop(supervisor);
}

#[test]
fn metrics_public_opens_metrics_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\nmetrics_public = true\n";
    let supervisor = support::Killed(support::up(dir, config, &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    let (addr, _) = gateway(dir, None);
    let (code, body) = http(&addr, "GET", "/metrics", None, b"");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("raven_actor_messages_received_total"), "{body}");
    let (code, _) = http(&addr, "POST", "/inbound", None, br#"{"chat_id": "ann", "text": "hi"}"#);
    assert_eq!(code, 401, "the inbound path still wants the secret");
    drop(supervisor);
}

#[test]
fn an_inbound_reply_is_the_http_answer_only_and_a_failed_reminder_is_not_done() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, "", &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    let (addr, _) = gateway(dir, None);

    // The webhook channel, with no webhook outlet: the reply is answered, and nothing is sent.
    let (code, body) = http(&addr, "POST", "/inbound", Some(SECRET), br#"{"chat_id": "ann", "text": "hello"}"#);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("No language model is configured"), "{body}");
    let (code, body) =
        http(&addr, "POST", "/inbound", Some(SECRET), br#"{"chat_id": "ann", "text": "/remind in 10m stretch"}"#);
    assert!(!body.contains("Done"), "a reminder that was not made is not done: {code} {body}");
    assert!(body.contains("no outlet delivers"), "{code} {body}");
    let log = std::fs::read_to_string(dir.join("up.stderr")).unwrap_or_default();
    assert!(!log.contains("reply not delivered"), "no reply was sent through an outlet: {log}");
}
