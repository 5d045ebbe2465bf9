//! What a remote service says reaches the user's terminal plain: an ntfy server that redirects
//! has published nothing (the message waits in the outbox, the error says it was a redirect),
//! and the escape sequences in a server's error text are taken out of `raven send`'s error
//! line and of `raven outbox` (waiting and dead letters), whatever wrote them there.

use crate::support;

use std::sync::Arc;
use support::fake_http::{FakeHttp, Seen};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The control characters a terminal acts on (all but tab and newline).
fn controls(s: &str) -> usize {
    s.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').count()
}

const ESCAPES: &str = "oops \u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}[31mRED\u{1b}[0m done";

#[test]
fn a_redirect_or_an_error_full_of_escapes_leaves_the_message_waiting_and_the_terminal_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ntfy = FakeHttp::start(Arc::new(|s: &Seen| match s.body["message"].as_str() {
        Some(m) if m.contains("moved") => (302, String::new()),
        _ => (500, ESCAPES.to_owned()),
    }));
    let config = format!(
        "[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
         [channels.ntfy]\nenabled = true\nserver = \"{}\"\ntopic = \"raven-test\"\n",
        ntfy.url
    );
    let _up = support::Killed(support::up(dir, &config, &[("RAVEN_GATEWAY_SECRET", "s")]));
    support::wait_ready(dir);
    // Until the gateway hosts ntfy, a send waits for it (the same message is queued once).
    let mut said = String::new();
    support::eventually("the gateway's connection", || {
        said = text(&support::raven(dir, &["send", "ntfy:default", "the server moved"]).stderr);
        !said.contains("not connected")
    });
    assert!(said.contains("kept in the outbox") && said.contains("redirect"), "{said}");
    let waiting = support::raven(dir, &["outbox", "--json"]);
    assert!(text(&waiting.stdout).contains("the server moved"), "it waits: {}", text(&waiting.stdout));

    let failed = support::raven(dir, &["send", "ntfy:default", "hello"]);
    let said = text(&failed.stderr);
    assert!(said.contains("oops RED done"), "{said}");
    assert_eq!(controls(&said), 0, "{said:?}");
    let listed = text(&support::raven(dir, &["outbox"]).stdout);
    assert!(listed.contains("oops RED done"), "{listed}");
    assert_eq!(controls(&listed), 0, "{listed:?}");
}

/// Whatever wrote escapes into the outbox (an older version, another tool), `raven outbox`
/// prints them plain; so does the error line of any command.
#[test]
fn the_outbox_and_an_error_line_print_no_escape_sequence() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    support::write_config(dir, &format!("[delivery]\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n"));
    let sent = support::raven(dir, &["send", "webhook:ann", "hello there"]);
    assert!(text(&sent.stderr).contains("kept in the outbox"), "{}", text(&sent.stderr));

    // What waits, as an earlier version kept it (`outbox.json`), with escapes written in;
    // the next writer imports it into the state database.
    let mut entries: serde_json::Value =
        serde_json::from_str(&text(&support::raven(dir, &["outbox", "--json"]).stdout)).unwrap();
    let id = entries[0]["text"]["delivery_id"].as_str().unwrap().to_owned();
    assert!(support::raven(dir, &["outbox", "drop", &id]).status.success());
    entries[0]["last_error"] = ESCAPES.into();
    let dead = serde_json::json!([{"entry": entries[0].clone(), "at": "2026-01-01T00:00:00Z", "why": ESCAPES}]);
    let state = serde_json::json!({"outbox": {"entries": entries, "dead": dead}});
    std::fs::create_dir_all(dir.join("sentinel/state")).unwrap();
    std::fs::write(dir.join("sentinel/state/outbox.json"), serde_json::to_vec(&state).unwrap()).unwrap();
    let imported = support::raven(dir, &["outbox", "drop", "no-such-id"]);
    assert!(text(&imported.stderr).contains("no message no-such-id"), "{}", text(&imported.stderr));
    assert!(
        dir.join("sentinel/state/outbox.json.migrated").is_file() && !dir.join("sentinel/state/outbox.json").exists()
    );
    for args in [&["outbox"][..], &["outbox", "--dead"][..]] {
        let listed = text(&support::raven(dir, args).stdout);
        assert!(listed.contains("oops RED done"), "{args:?}: {listed}");
        assert_eq!(controls(&listed), 0, "{args:?}: {listed:?}");
    }

    let refused = support::raven(dir, &["send", ESCAPES, "hi"]);
    let said = text(&refused.stderr);
    assert!(said.starts_with("raven: ") && said.contains("oops"), "{said}");
    assert_eq!(controls(&said), 0, "{said:?}");
}
