//! One conversation, one file, through the real gateway and a test model: ids that once met
//! in one file (`alice_1`, `alice/1`, `webhook_alice` + `1`) are three conversations that never
//! see each other's words; a name no file could hold is a 400, never answered and then lost;
//! the old names are moved once at start; a 300 MB model reply is dropped, never stored.

use crate::support;

use support::model::{Answer, FakeModel};
use support::{http, Killed};

const SECRET: &str = "s3cret";

fn up_with_model(dir: &std::path::Path, model: &FakeModel) -> Killed {
    let config = format!("[llm]\nbase_url = \"{}\"\n[sentinel]\nenabled = false\n", model.base_url());
    let child = Killed(support::up(dir, &config, &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    child
}

fn post(addr: &str, channel: &str, chat_id: &str, text: &str) -> (u16, String) {
    let body = serde_json::json!({"channel": channel, "chat_id": chat_id, "text": text}).to_string();
    http(addr, "POST", "/inbound", Some(SECRET), body.as_bytes())
}

fn session_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    names
}

#[test]
fn three_ids_that_once_shared_a_file_are_three_conversations() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = FakeModel::start(Answer::Text("noted".into()));
    let _up = up_with_model(dir, &model);
    let (addr, _) = support::gateway(dir);

    let (code, body) = post(&addr, "webhook", "alice_1", "my PIN is 4321");
    assert_eq!(code, 200, "{body}");
    for (channel, chat) in [("webhook", "alice/1"), ("webhook_alice", "1")] {
        let (code, body) = post(&addr, channel, chat, &format!("what is my PIN? ({channel} {chat})"));
        assert_eq!(code, 200, "{body}");
    }
    for (channel, chat) in [("webhook", "alice/1"), ("webhook_alice", "1")] {
        let turns = model.turns_on(&format!("what is my PIN? ({channel} {chat})"));
        assert_eq!(turns.len(), 1, "one model call for the turn: {turns:?}");
        let sent = turns[0].to_string();
        assert!(!sent.contains("4321"), "{channel}:{chat} was given another conversation's words: {sent}");
    }
    // Each conversation does see its own history.
    let (code, _) = post(&addr, "webhook", "alice_1", "and again?");
    assert_eq!(code, 200);
    assert!(model.turns_on("and again?")[0].to_string().contains("4321"), "its own history reaches the model");
    assert_eq!(session_files(dir), ["webhook%5Falice_1.jsonl", "webhook_alice%2F1.jsonl", "webhook_alice%5F1.jsonl"]);
}

#[test]
fn a_name_no_file_can_hold_is_a_400_and_no_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = FakeModel::start(Answer::Text("noted".into()));
    let _up = up_with_model(dir, &model);
    let (addr, _) = support::gateway(dir);

    let long = "a".repeat(300);
    for (channel, chat, says) in [
        ("webhook", long.as_str(), "chat_id is 300 bytes; at most 128"),
        ("webhook", "bob\u{0}1", "chat_id must not hold control characters"),
        ("web:hook", "bob", "channel may hold only"),
    ] {
        let (code, body) = post(&addr, channel, chat, "hello");
        assert_eq!(code, 400, "{channel}:{chat:?}: {body}");
        assert!(body.contains(says), "{body}");
    }
    assert!(model.requests().is_empty(), "no turn ran: {:?}", model.requests());
    assert!(!dir.join("sessions").exists() || session_files(dir).is_empty(), "{:?}", session_files(dir));
}

#[test]
fn old_session_names_are_moved_once_at_start_without_merging() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let line = |text: &str| format!("{{\"role\":\"user\",\"content\":\"{text}\",\"at\":\"2026-03-02T12:00:00Z\"}}\n");
    std::fs::write(sessions.join("telegram_42.jsonl"), line("hi")).unwrap();
    std::fs::write(sessions.join("webhook_alice_1.jsonl"), line("my PIN is 4321")).unwrap();
    std::fs::write(sessions.join("webhook_x%5Fy.jsonl"), line("percent")).unwrap();

    let model = FakeModel::start(Answer::Text("noted".into()));
    let up = up_with_model(dir, &model);
    assert_eq!(session_files(dir), ["telegram_42.jsonl", "webhook_alice%5F1.jsonl", "webhook_x%255Fy.jsonl"]);
    assert_eq!(std::fs::read_to_string(sessions.join("webhook_alice%5F1.jsonl")).unwrap(), line("my PIN is 4321"));
    // The moved conversation is found under its id.
    let (addr, _) = support::gateway(dir);
    let (code, _) = post(&addr, "webhook", "alice_1", "what is my PIN?");
    assert_eq!(code, 200);
    assert!(model.turns_on("what is my PIN?")[0].to_string().contains("4321"));
    drop(up);
    // Once: the next start moves nothing.
    std::fs::write(sessions.join("webhook_p_q.jsonl"), line("new layout")).unwrap();
    let _up = up_with_model(dir, &model);
    assert!(sessions.join("webhook_p_q.jsonl").exists());
}

#[test]
fn a_300_mb_model_reply_is_dropped_and_the_next_start_is_normal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = FakeModel::start(Answer::Huge(300 << 20));
    let up = up_with_model(dir, &model);
    let (addr, _) = support::gateway(dir);
    let (code, body) = post(&addr, "webhook", "ann", "hello");
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("over 1048576 bytes"), "the failure says why: {body}");
    drop(up);

    let size = |p: std::path::PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let session = size(dir.join("sessions/webhook_ann.jsonl"));
    assert!(session > 0 && session < 4096, "the user's line is kept, the reply is not: {session} bytes");
    let state = std::fs::read_dir(dir.join("sentinel/state")).into_iter().flatten().flatten().map(|e| e.path());
    for path in state.chain(["state.db", "state.db-wal"].map(|f| dir.join(f))) {
        assert!(size(path.clone()) < 1 << 20, "{} is {} bytes", path.display(), size(path.clone()));
    }
    // The next start is an ordinary one.
    let _up = up_with_model(dir, &model);
    let status = String::from_utf8_lossy(&support::raven(dir, &["status"]).stdout).into_owned();
    assert!(status.contains("Planner"), "{status}");
}
