//! The extractor against a real HTTP server on 127.0.0.1 (wiremock) through
//! `OpenAiProvider`, and against a counting provider where no call may happen.

use super::*;
use crate::context::behaviors::folded_tail;
use crate::llm::decorator::Counted;
use crate::llm::openai::OpenAiProvider;
use crate::llm::provider::{Provider, ProviderError, ProviderReply};
use chrono::TimeZone;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;
use std::rc::Rc;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, h, m, 0).unwrap()
}

struct Setup {
    _dir: tempfile::TempDir,
    sessions: PathBuf,
    md: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let md = dir.path().join("user_memory").join("behaviors.md");
        Setup { _dir: dir, sessions, md }
    }

    /// Appends one message to `sessions/<file>.jsonl`.
    fn say(&self, file: &str, role: &str, content: &str, when: DateTime<Utc>) {
        use std::io::Write;
        let line = json!({"role": role, "content": content, "at": when.to_rfc3339()});
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.sessions.join(format!("{file}.jsonl")))
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }

    fn extractor(&self, provider: SharedProvider, max_messages: usize) -> BehaviorsExtractor {
        let cfg = BehaviorsConfig { enabled: true, idle_minutes: 30, max_messages };
        BehaviorsExtractor::new(&self.sessions, &self.md, provider, cfg)
    }

    fn md_text(&self) -> Option<String> {
        std::fs::read_to_string(&self.md).ok()
    }

    fn cursor_text(&self) -> Option<String> {
        std::fs::read_to_string(cursor_path(&self.md)).ok()
    }
}

fn tool_reply(name: &str, args: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}]}))
}

async fn server_answering(template: ResponseTemplate) -> (MockServer, SharedProvider) {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/chat/completions")).respond_with(template).mount(&server).await;
    let provider = OpenAiProvider::new(
        &format!("{}/v1", server.uri()),
        "test-model",
        Some("sk-test".into()),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    (server, Rc::new(provider) as SharedProvider)
}

async fn answer(server: &MockServer, template: ResponseTemplate) {
    server.reset().await;
    Mock::given(method("POST")).and(path("/v1/chat/completions")).respond_with(template).mount(server).await;
}

/// The prompt of each request the server received (the user message).
async fn prompts(server: &MockServer) -> Vec<String> {
    let requests = server.received_requests().await.unwrap();
    requests
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            body["messages"][1]["content"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn two_events() -> Value {
    json!({"events": [
        {"at": "2026-03-02 08:00", "kind": "routine", "summary": "Runs 5 km before work"},
        {"at": "2026-03-02 08:10", "kind": "preference", "summary": "Wants reminders short"}
    ]})
}

struct Refusing;

impl Provider for Refusing {
    fn name(&self) -> &str {
        "refusing"
    }

    fn complete<'a>(&'a self, _: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async { Err(ProviderError::Transport("must not be called".into())) })
    }
}

#[actix_rt::test]
async fn disabled_it_creates_nothing_changes_nothing_and_calls_no_model() {
    let s = Setup::new();
    s.say("cli_1", "user", "I run every morning", at(8, 0));
    let (counted, calls) = Counted::new(Rc::new(Refusing));
    let provider: SharedProvider = Rc::new(counted);
    let cfg = BehaviorsConfig::default();
    assert!(!cfg.enabled, "off by default");
    let mut x = BehaviorsExtractor::new(&s.sessions, &s.md, provider.clone(), cfg.clone());
    let report = x.maybe_extract(at(12, 0)).await.unwrap();
    assert_eq!(report, ExtractReport::default());
    assert_eq!(calls.get(), 0);
    assert!(s.md_text().is_none() && s.cursor_text().is_none(), "no file created");
    assert!(!s.md.parent().unwrap().exists(), "not even its directory");

    std::fs::create_dir_all(s.md.parent().unwrap()).unwrap();
    std::fs::write(&s.md, "# Behaviors\n\n- older\n").unwrap();
    let mut x = BehaviorsExtractor::new(&s.sessions, &s.md, provider, cfg);
    x.maybe_extract(at(12, 0)).await.unwrap();
    assert_eq!(calls.get(), 0);
    assert_eq!(s.md_text().unwrap(), "# Behaviors\n\n- older\n");
}

#[actix_rt::test]
async fn a_settled_session_becomes_events_that_the_folded_tail_reads_back() {
    let s = Setup::new();
    s.say("cli_1", "user", "Back from my 5k run, as every morning", at(8, 0));
    s.say("cli_1", "assistant", "Nice! Anything for today?", at(8, 1));
    s.say("cli_1", "user", "Keep reminders short please", at(8, 10));
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, two_events())).await;
    let mut x = s.extractor(provider, 40);
    let report = x.maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!(report.errors, Vec::<String>::new());
    assert_eq!((report.calls, report.appended, report.extracted), (1, 2, vec!["cli:1".to_owned()]));

    let expected = "- 2026-03-02 08:00 [routine] Runs 5 km before work\n\
                    - 2026-03-02 08:10 [preference] Wants reminders short";
    let text = s.md_text().unwrap();
    assert_eq!(text, format!("# Behaviors\n\n{expected}\n"));
    assert_eq!(folded_tail(&text, 20), expected);
    assert_eq!(folded_tail(&text, 1), "- 2026-03-02 08:10 [preference] Wants reminders short");

    // One forced tool call, carrying the session's messages with their times.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["tool_choice"]["function"]["name"], TOOL_NAME);
    assert_eq!(body["tools"][0]["function"]["name"], TOOL_NAME);
    let prompt = body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("[2026-03-02 08:00] user: Back from my 5k run"), "{prompt}");
    assert!(prompt.contains("[2026-03-02 08:10] user: Keep reminders short"), "{prompt}");
}

#[actix_rt::test]
async fn a_second_run_without_new_messages_makes_no_call_and_a_new_message_alone_is_sent() {
    let s = Setup::new();
    s.say("cli_1", "user", "first message", at(8, 0));
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, json!({"events": []}))).await;
    let mut x = s.extractor(provider.clone(), 40);
    assert_eq!(x.maybe_extract(at(9, 0)).await.unwrap().calls, 1);
    let again = x.maybe_extract(at(10, 0)).await.unwrap();
    assert_eq!((again.calls, again.extracted.len()), (0, 0));
    // A new extractor (a restart) reads the persisted cursor.
    let mut restarted = s.extractor(provider, 40);
    assert_eq!(restarted.maybe_extract(at(11, 0)).await.unwrap().calls, 0);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);

    s.say("cli_1", "user", "second message", at(11, 0));
    assert_eq!(restarted.maybe_extract(at(12, 0)).await.unwrap().calls, 1);
    let sent = prompts(&server).await;
    assert_eq!(sent.len(), 2);
    assert!(sent[1].contains("second message") && !sent[1].contains("first message"), "{}", sent[1]);
    assert!(s.md_text().is_none(), "an empty answer appends nothing");
}

#[actix_rt::test]
async fn a_session_not_yet_idle_is_not_extracted() {
    let s = Setup::new();
    s.say("cli_1", "user", "settled talk", at(8, 0));
    s.say("tg_2", "user", "ongoing talk", at(8, 45));
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, json!({"events": []}))).await;
    let mut x = s.extractor(provider, 40);
    let report = x.maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!(report.extracted, vec!["cli:1".to_owned()]);
    assert_eq!(report.waiting, vec!["tg:2".to_owned()]);
    let sent = prompts(&server).await;
    assert_eq!(sent.len(), 1);
    assert!(sent[0].contains("settled talk") && !sent[0].contains("ongoing"), "{}", sent[0]);

    // 29 minutes after its last message it still waits; at 30 it is extracted.
    assert_eq!(x.maybe_extract(at(9, 14)).await.unwrap().waiting, vec!["tg:2".to_owned()]);
    assert_eq!(x.maybe_extract(at(9, 15)).await.unwrap().extracted, vec!["tg:2".to_owned()]);
    assert_eq!(prompts(&server).await.len(), 2);
}

#[actix_rt::test]
async fn a_malformed_tool_answer_appends_nothing_and_keeps_the_cursor() {
    let s = Setup::new();
    s.say("cli_1", "user", "I run every morning", at(8, 0));
    let bad_event = json!({"events": [
        {"at": "2026-03-02 08:00", "kind": "routine", "summary": "Runs"},
        {"at": "this morning", "kind": "routine", "summary": "Runs again"}
    ]});
    let answers = [
        tool_reply(TOOL_NAME, bad_event),
        tool_reply(TOOL_NAME, json!({"events": "Runs every morning"})),
        tool_reply("planner_decision", two_events()),
        ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"content": "Runs every morning"}}]})),
    ];
    let (server, provider) = server_answering(ResponseTemplate::new(500)).await;
    let mut x = s.extractor(provider, 40);
    for template in answers {
        answer(&server, template).await;
        let report = x.maybe_extract(at(9, 0)).await.unwrap();
        assert_eq!((report.calls, report.appended, report.errors.len()), (1, 0, 1), "{report:?}");
        assert!(report.extracted.is_empty());
        assert!(s.md_text().is_none() && s.cursor_text().is_none(), "nothing written: {report:?}");
    }
    // The same messages are offered again and a good answer now lands.
    answer(&server, tool_reply(TOOL_NAME, two_events())).await;
    let report = x.maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!(report.appended, 2);
    assert!(prompts(&server).await[0].contains("I run every morning"));
}

#[actix_rt::test]
async fn a_provider_error_leaves_file_and_cursor_untouched() {
    let s = Setup::new();
    std::fs::create_dir_all(s.md.parent().unwrap()).unwrap();
    std::fs::write(&s.md, "# Behaviors\n\n- 2026-03-01 08:00 [routine] Runs\n").unwrap();
    s.say("cli_1", "user", "hello", at(8, 0));
    let (_server, provider) = server_answering(ResponseTemplate::new(503).set_body_string("overloaded")).await;
    let mut x = s.extractor(provider, 40);
    let report = x.maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!(report.errors.len(), 1);
    assert!(report.errors[0].contains("503"), "{:?}", report.errors);
    assert_eq!(s.md_text().unwrap(), "# Behaviors\n\n- 2026-03-01 08:00 [routine] Runs\n");
    assert!(s.cursor_text().is_none());
}

#[actix_rt::test]
async fn at_most_max_messages_go_into_one_call_and_the_rest_follow_on_the_next_run() {
    let s = Setup::new();
    for (i, m) in [0, 1, 2].into_iter().enumerate() {
        s.say("cli_1", "user", &format!("message {i}"), at(8, m));
    }
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, json!({"events": []}))).await;
    let mut x = s.extractor(provider, 2);
    x.maybe_extract(at(9, 0)).await.unwrap();
    x.maybe_extract(at(9, 30)).await.unwrap();
    let sent = prompts(&server).await;
    assert_eq!(sent.len(), 2);
    assert!(sent[0].contains("message 0") && sent[0].contains("message 1") && !sent[0].contains("message 2"));
    assert!(sent[1].contains("message 2") && !sent[1].contains("message 1"), "{}", sent[1]);
}

#[actix_rt::test]
async fn messages_without_a_user_line_move_the_cursor_without_a_call() {
    let s = Setup::new();
    s.say("cli_1", "assistant", "Reminder: taxes are due", at(8, 0));
    let (counted, calls) = Counted::new(Rc::new(Refusing));
    let mut x = s.extractor(Rc::new(counted), 40);
    let report = x.maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!((report.calls, calls.get()), (0, 0));
    assert_eq!(report.extracted, vec!["cli:1".to_owned()]);
    assert!(s.md_text().is_none());
    assert!(s.cursor_text().unwrap().contains("cli:1"));
}

#[actix_rt::test]
async fn event_times_are_the_users_local_times() {
    let s = Setup::new();
    s.say("cli_1", "user", "run done", at(8, 0));
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, json!({"events": []}))).await;
    let mut x = s.extractor(provider, 40).with_timezone(chrono_tz::Europe::Paris);
    x.maybe_extract(at(9, 0)).await.unwrap();
    let sent = prompts(&server).await;
    assert!(sent[0].contains("[2026-03-02 09:00] user: run done") && sent[0].contains("Europe/Paris"), "{}", sent[0]);
}

#[actix_rt::test]
async fn an_idle_minutes_beyond_any_duration_means_waiting_not_a_panic() {
    let s = Setup::new();
    s.say("cli_1", "user", "hello", at(8, 0));
    let (counted, calls) = Counted::new(Rc::new(Refusing));
    let cfg = BehaviorsConfig { enabled: true, idle_minutes: u64::MAX, max_messages: 40 };
    let mut x = BehaviorsExtractor::new(&s.sessions, &s.md, Rc::new(counted), cfg);
    assert_eq!(x.maybe_extract(at(23, 0)).await.unwrap().waiting, vec!["cli:1".to_owned()]);
    assert_eq!(calls.get(), 0);
}

#[test]
fn a_byte_that_is_not_utf8_spoils_its_own_message_only() {
    let s = Setup::new();
    s.say("telegram_1", "user", "I run at seven", at(7, 0));
    let path = s.sessions.join("telegram_1.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"role\": \"user\", \"content\": \"\xff\"}\n");
    std::fs::write(&path, bytes).unwrap();
    s.say("telegram_1", "user", "and swim at eight", at(8, 0));
    let read: Vec<String> = read_messages(&path).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(read, ["I run at seven", "and swim at eight"]);
}

#[actix_rt::test]
async fn the_engines_own_conversations_teach_nothing_about_the_user() {
    let s = Setup::new();
    for own in ["heartbeat_main", "cron_a5fst0", "subagent_1-2"] {
        s.say(own, "user", "Check the open tasks in HEARTBEAT.md", at(8, 0));
    }
    s.say("telegram_42", "user", "Back from my 5k run, as every morning", at(8, 0));
    let (server, provider) = server_answering(tool_reply(TOOL_NAME, two_events())).await;
    let report = s.extractor(provider, 40).maybe_extract(at(9, 0)).await.unwrap();
    assert_eq!((report.calls, report.extracted), (1, vec!["telegram:42".to_owned()]));
    let asked = prompts(&server).await;
    assert!(asked.iter().all(|p| !p.contains("HEARTBEAT.md")), "{asked:?}");
}
