//! The Matrix channel against a real Synapse on 127.0.0.1 (started by `scripts/synapse.sh`,
//! which installs it from PyPI into `target/py` the first time): a nudge arrives in the user's
//! room; the user's message reaches the agent and its answer comes back; a 👍 reaction records
//! a verdict; a keycap reaction to a discovery menu picks its option; the supervisor (killed) and the homeserver are each restarted once, and the
//! gateway killed while 110 messages arrive; nothing is lost or repeated.

use crate::support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::Duration;
use support::servers::Server;

/// How often the test asks the homeserver: every few ms would load it as much as the bot does.
const POLL: Duration = Duration::from_millis(100);
/// How long one step may take: a Python homeserver on a loaded 2-core machine is slow.
const STEP_LIMIT: Duration = Duration::from_secs(60);
/// How long the 110-message burst may take to be answered.
const BURST_LIMIT: Duration = Duration::from_secs(90);

/// Waits for `check`, asking every [`POLL`], for up to [`STEP_LIMIT`].
pub(super) fn until(what: &str, check: impl FnMut() -> bool) {
    support::eventually_within(what, STEP_LIMIT, POLL, check);
}

/// One client-server API call; the JSON answer (panics on a non-2xx).
fn call(base: &str, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Value {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(STEP_LIMIT)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let auth = token.map(|t| format!("authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(
        s,
        "{method} /_matrix/client/v3{path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n{auth}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let payload =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(rest) } else { rest.to_owned() };
    let code: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((200..300).contains(&code), "{method} {path}: {code} {payload}");
    serde_json::from_str(&payload).unwrap_or(Value::Null)
}

fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

fn login(base: &str, user: &str, password: &str) -> String {
    let body =
        json!({"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user}, "password": password});
    call(base, "POST", "/login", None, Some(&body))["access_token"].as_str().unwrap().to_owned()
}

/// The user's side: her token and the room she is in.
pub(super) struct Alice {
    base: String,
    token: String,
    pub room: String,
}

/// A room alice creates and invites Raven's account to, as a user sets it up: Raven is not in
/// it until it joins.
pub(super) fn room_of_alice(base: &str) -> Alice {
    let token = login(base, "alice", "alice-pass");
    let body = json!({"preset": "private_chat", "invite": ["@raven:raven.test"]});
    let room = call(base, "POST", "/createRoom", Some(&token), Some(&body))["room_id"].as_str().unwrap().to_owned();
    Alice { base: base.to_owned(), token, room }
}

/// A homeserver's room for the test: Raven's account creates it and invites alice, who joins.
pub(super) fn room_with_alice(base: &str) -> Alice {
    let raven_token = login(base, "raven", "raven-pass");
    let body = json!({"preset": "private_chat", "invite": ["@alice:raven.test"]});
    let room =
        call(base, "POST", "/createRoom", Some(&raven_token), Some(&body))["room_id"].as_str().unwrap().to_owned();
    let alice_token = login(base, "alice", "alice-pass");
    call(base, "POST", &format!("/join/{room}"), Some(&alice_token), Some(&json!({})));
    Alice { base: base.to_owned(), token: alice_token, room }
}

impl Alice {
    /// Every event of the room, oldest first, read back through `/messages` page by page (a
    /// sync can come back `limited` and leave a gap, as a busy room does to any client).
    fn history(&self) -> Vec<Value> {
        let mut events = Vec::new();
        let mut from = String::new();
        loop {
            let path = format!("/rooms/{}/messages?dir=b&limit=100{from}", self.room);
            let page = call(&self.base, "GET", &path, Some(&self.token), None);
            let chunk = page["chunk"].as_array().cloned().unwrap_or_default();
            events.extend(chunk.iter().cloned());
            match page["end"].as_str() {
                Some(end) if !chunk.is_empty() => from = format!("&from={end}"),
                _ => break,
            }
        }
        events.reverse();
        events
    }

    /// The bodies of the bot's messages so far.
    pub(super) fn said_by_raven(&self) -> Vec<(String, String)> {
        self.history()
            .iter()
            .filter(|e| e["sender"] == "@raven:raven.test" && e["type"] == "m.room.message")
            .map(|e| (e["event_id"].as_str().unwrap().to_owned(), e["content"]["body"].as_str().unwrap().to_owned()))
            .collect()
    }

    pub(super) fn say(&self, txn: &str, text: &str) {
        let path = format!("/rooms/{}/send/m.room.message/{txn}", self.room);
        call(&self.base, "PUT", &path, Some(&self.token), Some(&json!({"msgtype": "m.text", "body": text})));
    }

    pub(super) fn react(&self, event: &str, key: &str) {
        self.react_as("r1", event, key);
    }

    fn react_as(&self, txn: &str, event: &str, key: &str) {
        let path = format!("/rooms/{}/send/m.reaction/{txn}", self.room);
        let body = json!({"m.relates_to": {"rel_type": "m.annotation", "event_id": event, "key": key}});
        call(&self.base, "PUT", &path, Some(&self.token), Some(&body));
    }
}

#[test]
fn a_room_with_a_real_homeserver_nudges_answers_rates_and_survives_restarts() {
    if support::servers::skipped(module_path!()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, hs_dir) = (tmp.path().join("data"), tmp.path().join("synapse"));
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let synapse = Server::start("synapse.sh", &hs_dir);
    let base = synapse.address.clone();

    let alice = room_with_alice(&base);
    let room = alice.room.clone();

    let config = format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\nrestart_backoff_ms = 4000\n[policy]\nsession_cooldown_minutes = 0\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n\
         [delivery]\ndefault_targets = [\"matrix:{room}\"]\noutbox_backoff_s = 1\n\
         [discovery]\nenabled = true\nhour = 0\ndays = []\ntarget = \"matrix:{room}\"\n\
         [channels.matrix]\nenabled = true\nhomeserver = \"{base}\"\nuser_id = \"@raven:raven.test\"\n\
         room_id = \"{room}\"\nallowed_users = [\"@alice:raven.test\"]\nsync_timeout_s = 1\n"
    );
    let env = [("RAVEN_MATRIX_PASSWORD", "raven-pass")];
    let up = support::Killed(support::up(&dir, &config, &env));
    support::wait_ready(&dir);
    support::gateway(&dir);

    // A nudge arrives in the room.
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    support::raven(&dir, &["tick"]);
    until("the nudge in the room", || alice.said_by_raven().iter().any(|(_, b)| b.contains("Call the bank")));
    let nudge = alice.said_by_raven().into_iter().find(|(_, b)| b.contains("Call the bank")).unwrap().0;

    // The user's message reaches the agent; the answer comes back.
    alice.say("m1", "hello raven");
    until("the answer", || alice.said_by_raven().iter().filter(|(_, b)| b.contains("No language model")).count() == 1);

    // A reaction is a verdict (made once the supervisor wrote the nudge's record, as a person
    // reacting seconds later would).
    let feedback = || std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    until("the nudge's record", || feedback().contains("\"dispatched\""));
    alice.react(&nudge, "👍");
    until("the verdict", || feedback().contains("\"accepted\""));

    // A discovery menu: a keycap reaction picks an option, as typing `/pick` would.
    let memory = std::fs::read_to_string(dir.join("workspace/MEMORY.md")).unwrap();
    let later = (support::now_local() + chrono::Duration::hours(3)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("{memory}- [ ] Renew the passport due: {later}\n"))
        .unwrap();
    let said = support::raven(&dir, &["discover", "--wait", "30"]);
    assert!(said.status.success(), "{}", String::from_utf8_lossy(&said.stderr));
    // The menu, told from a nudge by how it says to pick.
    let is_menu = |b: &str| b.contains("Renew the passport") && b.contains("react 1\u{fe0f}\u{20e3}");
    until("the menu in the room", || alice.said_by_raven().iter().any(|(_, b)| is_menu(b)));
    let (menu, _) = alice.said_by_raven().into_iter().find(|(_, b)| is_menu(b)).unwrap();
    let before = alice.said_by_raven().len();
    alice.react_as("r2", &menu, "1\u{fe0f}\u{20e3}");
    until("the pick's answer", || alice.said_by_raven().len() > before);
    let jobs = std::fs::read_to_string(dir.join("cron/jobs.json")).unwrap_or_default();
    assert!(jobs.contains("Renew the passport"), "option 1 ran: a reminder is scheduled: {jobs}");

    // The supervisor killed (SIGKILL): the user writes while none runs; her message is not
    // lost: the gateway hands it to the next supervisor, which answers it once.
    let killed = std::process::Command::new("kill").args(["-KILL", &up.0.id().to_string()]).status().unwrap();
    assert!(killed.success());
    drop(up);
    alice.say("m2", "are you back?");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _up = support::Killed(support::up(&dir, &config, &env));
    support::wait_ready(&dir);
    until("the answer after the supervisor's restart", || {
        alice.said_by_raven().iter().filter(|(_, b)| b.contains("No language model")).count() == 2
    });

    // The homeserver restarted: the bot syncs on from where it was.
    synapse.restart();
    alice.say("m3", "and after the homeserver's restart?");
    until("the answer after the homeserver's restart", || {
        alice.said_by_raven().iter().filter(|(_, b)| b.contains("No language model")).count() == 3
    });
    // The gateway killed; 110 messages while it is down (more than one sync shows): each is
    // read back and answered once.
    let (_, gateway) = support::gateway(&dir);
    assert!(std::process::Command::new("kill").args(["-KILL", &gateway.to_string()]).status().unwrap().success());
    for i in 0..110 {
        alice.say(&format!("b{i}"), &format!("burst {i}"));
    }
    let answers = |alice: &Alice| alice.said_by_raven().iter().filter(|(_, b)| b.contains("No language model")).count();
    // 110 round trips through a Python homeserver on a loaded machine: polled gently, waited for
    // long (a liveness wait, not a speed check).
    let started = std::time::Instant::now();
    support::eventually_within("an answer to each message of the burst", BURST_LIMIT, POLL, || answers(&alice) == 113);
    eprintln!("the burst was answered in {:?}", started.elapsed());
    std::thread::sleep(std::time::Duration::from_secs(2));
    let said = alice.said_by_raven();
    assert_eq!(answers(&alice), 113, "none repeated: {said:?}");
    assert_eq!(said.iter().filter(|(_, b)| b.contains("Call the bank")).count(), 1, "{said:?}");
    assert_eq!(feedback().matches("\"accepted\"").count(), 1, "{}", feedback());
    let jobs = std::fs::read_to_string(dir.join("cron/jobs.json")).unwrap_or_default();
    assert_eq!(jobs.matches("Renew the passport").count(), 1, "the pick ran once, through the restarts: {jobs}");
}
