//! `raven outbox` as a user runs it: a message no outlet could take is listed with its
//! attempts and last error; `drop` takes it away; an unknown id is refused with exit 2.

use crate::support;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_outbox_lists_what_waits_and_drop_takes_it_away() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A webhook nobody listens on: the message waits in the outbox.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let config = format!("[delivery]\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n");
    support::write_config(dir, &config);
    let sent = support::raven(dir, &["send", "webhook:ann", "hello there"]);
    assert!(text(&sent.stderr).contains("kept in the outbox"), "{}", text(&sent.stderr));

    let list = text(&support::raven(dir, &["outbox"]).stdout);
    assert!(
        list.starts_with("1 waiting") && list.contains("webhook:ann") && list.contains("\"hello there\""),
        "{list}"
    );
    let json: serde_json::Value = serde_json::from_slice(&support::raven(dir, &["outbox", "--json"]).stdout).unwrap();
    let id = json[0]["text"]["delivery_id"].as_str().unwrap().to_owned();
    assert!(text(&support::raven(dir, &["outbox", "--dead"]).stdout).starts_with("0 dead letters"));

    let nope = support::raven(dir, &["outbox", "drop", "nope"]);
    assert_eq!(nope.status.code(), Some(2));
    assert!(text(&nope.stderr).contains("no message nope in the outbox"));
    let dropped = support::raven(dir, &["outbox", "drop", &id]);
    assert!(text(&dropped.stdout).contains(&format!("dropped {id}")), "{}", text(&dropped.stderr));
    assert!(text(&support::raven(dir, &["outbox"]).stdout).starts_with("0 waiting"));
}

/// The outbox an earlier version kept (`sentinel/state/outbox.json`), as it wrote it.
const EARLIER: &str = r#"{
  "outbox": {
    "entries": [{
      "attempts": 2, "expires_at": null, "fire": null, "last_error": "connection refused", "lease": null,
      "next_attempt_at": "2099-03-02T12:00:00Z", "queued_at": "2026-03-02T11:00:00Z",
      "said": null,
      "text": {"channel": "webhook", "chat_id": "ann", "content": "Pick up the parcel",
               "delivery_id": "send-1-1@webhook:ann", "extras": {}}
    }],
    "dead": [{
      "at": "2026-03-02T11:30:00Z", "why": "not delivered by 2026-03-02 11:30:00 UTC (2 attempts; last: down)",
      "entry": {
        "attempts": 2, "expires_at": "2026-03-02T11:30:00Z", "fire": null, "last_error": "down", "lease": null,
        "next_attempt_at": "2026-03-02T11:29:00Z", "queued_at": "2026-03-02T11:00:00Z",
        "said": {"job": "j1", "nudge_id": "cron-j1-1", "priority": "low", "source": "cron", "topic": "tea"},
        "text": {"channel": "cli", "chat_id": "local", "content": "Reminder: tea",
                 "delivery_id": "cron-j1-1@cli:local", "extras": {"_sentinel_origin": "true", "nudge_id": "cron-j1-1"}}
      }
    }]
  }
}"#;

/// A data dir an earlier version wrote: a command that only reads shows its outbox and leaves
/// the file; the first writer imports it into the state database, keeps the old file as
/// `outbox.json.migrated`, and every view shows the same messages after.
#[test]
fn an_earlier_versions_outbox_is_imported_once_by_the_first_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    support::write_config(dir, &format!("[delivery]\nwebhook_url = \"http://{closed}/hook\"\nwebhook_attempts = 0\n"));
    let state = dir.join("sentinel/state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("outbox.json"), EARLIER).unwrap();
    let views = || {
        [&["outbox", "--json"][..], &["outbox", "--dead", "--json"][..]]
            .map(|args| serde_json::from_slice::<serde_json::Value>(&support::raven(dir, args).stdout).unwrap())
    };
    let before = views();
    assert_eq!(before[0][0]["text"]["content"], "Pick up the parcel");
    assert_eq!(before[1][0]["entry"]["text"]["content"], "Reminder: tea");
    assert!(state.join("outbox.json").is_file() && !dir.join("state.db").exists(), "a read changes nothing");

    let tick = support::raven(dir, &["tick"]);
    assert!(tick.status.success(), "{}", text(&tick.stderr));
    assert!(dir.join("state.db").is_file() && !state.join("outbox.json").exists());
    assert_eq!(std::fs::read_to_string(state.join("outbox.json.migrated")).unwrap(), EARLIER, "kept as it was");
    assert_eq!(views(), before, "the same messages, now from the database");
    let export: serde_json::Value =
        serde_json::from_slice(&support::raven(dir, &["state", "export", "--json"]).stdout).unwrap();
    assert_eq!(export["outbox"]["entries"], before[0]);
    assert_eq!(export["outbox"]["dead"], before[1]);
    assert_eq!(export["cron"], serde_json::json!([]), "no job, no run state");
    let check = support::raven(dir, &["state", "check"]);
    assert!(check.status.success() && text(&check.stdout).starts_with("ok: "), "{}", text(&check.stdout));
    // A second writer finds nothing left to import, and imports nothing twice.
    assert!(support::raven(dir, &["tick"]).status.success());
    assert_eq!(views(), before);
}
