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
