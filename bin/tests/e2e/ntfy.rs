//! The ntfy channel against a local HTTP server standing for ntfy: a nudge is published with
//! its title, priority, tags and, with `[gateway] public_url` set, the three feedback buttons
//! as `http` actions on signed links; a tap on one records its verdict once (a second tap,
//! or a forged link, is refused).

use crate::support;

use serde_json::{json, Value};
use std::sync::Arc;
use support::fake_http::{FakeHttp, Seen};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_push_carries_signed_buttons_and_a_tap_counts_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ntfy = FakeHttp::start(Arc::new(|_: &Seen| (200, json!({"id": "x", "event": "message"}).to_string())));
    let listen = format!("127.0.0.1:{}", free_port());
    let config = format!(
        "[gateway]\nlisten = \"{listen}\"\npublic_url = \"http://{listen}\"\nrestart_backoff_ms = 3000\n\
         [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n[delivery]\ndefault_targets = [\"ntfy:raven-test\"]\n\
         [channels.ntfy]\nenabled = true\nserver = \"{}\"\ntopic = \"raven-test\"\n",
        ntfy.url
    );
    let _up = support::Killed(support::up(dir, &config, &[("RAVEN_NTFY_TOKEN", "tk_secret")]));
    support::wait_ready(dir);
    let (addr, gateway_pid) = support::gateway(dir);

    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    // Delivered now, or, if the gateway was still connecting, from the outbox as it connects.
    let tick = support::raven(dir, &["tick"]);
    assert!(text(&tick.stdout).contains("ntfy:raven-test"), "{}{}", text(&tick.stdout), text(&tick.stderr));
    support::eventually("the publish", || !ntfy.requests("/").is_empty());

    let published = ntfy.requests("/");
    assert_eq!(published.len(), 1, "{published:?}");
    let p = &published[0];
    assert_eq!(p.method, "POST");
    assert_eq!((p.body["topic"].as_str(), p.body["priority"].as_u64()), (Some("raven-test"), Some(3)), "{:?}", p.body);
    assert!(
        p.body["message"].as_str().unwrap().contains("Call the bank") && p.body["title"].is_string(),
        "{:?}",
        p.body
    );
    assert!(p.headers.iter().any(|(k, v)| k == "authorization" && v == "Bearer tk_secret"), "{:?}", p.headers);
    let actions = p.body["actions"].as_array().expect("buttons");
    assert_eq!(actions.len(), 3);
    let prefix = format!("http://{listen}/tap/");
    assert!(
        actions.iter().all(|a| a["action"] == "http" && a["url"].as_str().unwrap().starts_with(&prefix)),
        "{actions:?}"
    );
    let stop = actions.iter().find(|a| a["label"].as_str().unwrap().contains("stop")).unwrap();
    let path = stop["url"].as_str().unwrap()[prefix.len() - "/tap/".len()..].to_owned();

    // The supervisor writes the nudge's record as the delivery is answered: a tap comes after.
    let feedback = || std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    support::eventually("the nudge's record", || feedback().contains("\"dispatched\""));
    let (code, body) = support::http(&addr, "POST", &path, None, b"");
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["recorded"]["verdict"], "dismissed", "{body}");
    let (code, body) = support::http(&addr, "POST", &path, None, b"");
    assert_eq!(code, 410, "a second tap is refused: {body}");
    let forged = path.replace("dismissed", "accepted");
    assert_eq!(support::http(&addr, "POST", &forged, None, b"").0, 403);
    let feedback = feedback();
    assert_eq!(feedback.matches("\"dismissed\"").count(), 1, "recorded once: {feedback}");

    // A message sent while the gateway is down waits, and goes as soon as a new gateway
    // connects: not at the outbox's next try, 30 s on.
    assert!(std::process::Command::new("kill").args(["-KILL", &gateway_pid.to_string()]).status().unwrap().success());
    let sent = support::raven(dir, &["send", "ntfy:raven-test", "sent while the gateway was down"]);
    let waited = text(&sent.stderr);
    assert!(waited.contains("kept in the outbox"), "no gateway for 3 s: it waits: {waited}");
    let connected = std::time::Instant::now();
    support::eventually("the message after the gateway's restart", || {
        ntfy.requests("/").iter().any(|p| p.body["message"] == "sent while the gateway was down")
    });
    assert!(connected.elapsed() < std::time::Duration::from_secs(15), "{waited}");
    let explain =
        support::raven(dir, &["policy", "explain", "--content", "Stretch your legs", "--session", "telegram:9"]);
    assert!(text(&explain.stdout).contains("verdict: deny at layer 7"), "{}", text(&explain.stdout));
}
