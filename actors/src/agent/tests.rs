//! The agent loop on the spine: INJECT into a running tool loop (against a real HTTP server),
//! ask_user holding pool slots, the cron-tool guard, the after-send gate.

use super::broker::QuestionBroker;
use super::tools::AskUserTool;
use super::tools::{CronJobs, CronTool};
use super::*;
use crate::clock::ManualClock;
use crate::llm::openai::OpenAiProvider;
use crate::llm::provider::{CompletionRequest, Provider, ProviderError, ToolSchema};
use crate::spine::{OriginPools, Routed, Scheduler};
use chrono::{TimeZone, Utc};
use raven_proto::BusyPolicy;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::time::Duration;
use tokio::sync::{mpsc, Notify};

fn clock() -> ManualClock {
    ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap())
}

/// A turn of conversation `channel:chat` (or `cli:<conv>` for a bare name).
fn turn(conv: &str, origin: Origin, content: &str, bp: BusyPolicy) -> TurnRequest {
    let (channel, chat) = conv.split_once(':').unwrap_or(("cli", conv));
    TurnRequest::new(format!("r-{content}"), origin, conv, channel, chat, content, bp, Utc::now())
}

fn agent(dir: &std::path::Path, provider: SharedProvider, tools: Vec<Rc<dyn Tool>>) -> AgentLoop {
    AgentLoop {
        provider,
        embedded: None,
        tools,
        sessions: SessionStore::new(dir.join("sessions")),
        injector: None,
        inbound_hooks: Vec::new(),
        clock: clock().shared(),
        max_iterations: 6,
        conversations: None,
        feedback: None,
        history: None,
        knowledge: None,
        micro: super::MicroLimits::default(),
    }
}

type Outcomes = mpsc::UnboundedReceiver<(TurnRequest, TurnOutcome)>;

fn spine(a: AgentLoop, user_pool: usize) -> (Scheduler, Outcomes) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Scheduler::new(Rc::new(Agent(Rc::new(a))), OriginPools::new(user_pool, 2)).with_outcomes(tx), rx)
}

async fn next(rx: &mut Outcomes) -> (TurnRequest, TurnOutcome) {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("a turn finished").unwrap()
}

/// A tool that holds the turn inside its tool loop until released.
struct Hold {
    entered: Rc<Notify>,
    release: Rc<Notify>,
}

impl Tool for Hold {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "lookup".into(),
            description: "look something up".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, _: &'a Value, _: &'a ToolCtx) -> LocalBoxFuture<'a, String> {
        Box::pin(async move {
            self.entered.notify_waiters();
            self.release.notified().await;
            "lookup result: 42".into()
        })
    }
}

#[actix_rt::test]
async fn an_inject_during_the_tool_loop_is_in_the_next_llm_request_of_the_same_turn() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let tool_call = json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}}]});
    let text = json!({"choices": [{"message": {"role": "assistant", "content": "The answer is 42."}}]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(tool_call))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(text)).mount(&server).await;
    let provider = OpenAiProvider::new(&server.uri(), "m", None, Duration::from_secs(5)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (entered, release) = (Rc::new(Notify::new()), Rc::new(Notify::new()));
    let hold = Rc::new(Hold { entered: entered.clone(), release: release.clone() });
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(provider), vec![hold]), 4);

    let entered_fut = entered.notified();
    s.submit(turn("cli:1", Origin::User, "what is the answer?", BusyPolicy::Append));
    entered_fut.await;
    assert!(s.has_inflight("cli:1"));
    assert_eq!(s.submit(turn("cli:1", Origin::User, "and keep it short", BusyPolicy::Inject)), Routed::Injected);
    release.notify_waiters();
    let (_, out) = next(&mut rx).await;
    assert_eq!(out, TurnOutcome::Replied("The answer is 42.".into()));

    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 2, "one turn, two model calls");
    let second: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let msgs = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "user"], "{msgs:?}");
    assert_eq!(msgs[2]["tool_calls"][0]["function"]["name"], "lookup");
    assert_eq!(msgs[3]["tool_call_id"], msgs[2]["tool_calls"][0]["id"]);
    assert_eq!(msgs[4]["content"], "and keep it short");
    assert!(s.queued("cli:1") == 0 && !s.has_inflight("cli:1"), "the inject did not become a second turn");
}

/// Decides from the last message: a tool result → text echoing it; "ask…" → ask_user;
/// "schedule…" → the cron tool; anything else → "hi".
#[derive(Default)]
struct Echo {
    calls: Cell<u32>,
}

impl Provider for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.calls.set(self.calls.get() + 1);
        let last = req.messages.last().cloned().unwrap();
        Box::pin(async move {
            Ok(match (last.role, last.content.as_str()) {
                (Role::Tool, result) => ProviderReply::Text(format!("done: {result}")),
                (_, c) if c.starts_with("ask") => ProviderReply::call(
                    "ask_user",
                    json!({"questions": [{"question": "Which one?", "choices": ["red", "blue"], "recommended": "blue", "header": "Colour"}]}),
                ),
                (_, c) if c.starts_with("schedule") => {
                    ProviderReply::call("cron", json!({"action": "add", "message": "stretch", "in_s": 600}))
                }
                _ => ProviderReply::Text("hi".into()),
            })
        })
    }
}

fn broker(budget: Duration, asked: Rc<RefCell<Vec<(String, String)>>>) -> Rc<QuestionBroker> {
    Rc::new(QuestionBroker::new(
        budget,
        Box::new(move |conv, q| asked.borrow_mut().push((conv.to_owned(), serde_json::to_string(q).unwrap()))),
    ))
}

#[actix_rt::test]
async fn four_conversations_on_ask_user_hold_the_fifth_until_one_answers() {
    let dir = tempfile::tempdir().unwrap();
    let asked = Rc::new(RefCell::new(Vec::new()));
    let b = broker(Duration::from_secs(30), asked.clone());
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(AskUserTool { broker: b.clone() })];
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(Echo::default()), tools), 4);
    for c in ["c1", "c2", "c3", "c4"] {
        s.submit(turn(c, Origin::User, "ask me", BusyPolicy::Append));
    }
    s.submit(turn("c5", Origin::User, "hello", BusyPolicy::Append));
    for _ in 0..50 {
        if asked.borrow().len() == 4 {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(asked.borrow().len(), 4, "four questions pending");
    let q: Value = serde_json::from_str(&asked.borrow()[0].1).unwrap();
    for key in ["question", "choices", "header", "recommended", "timeout_s", "index", "total", "batch"] {
        assert!(q.get(key).is_some(), "clarify.request lacks {key}: {q}");
    }
    assert!(!s.has_inflight("c5"), "the fifth waits for a user slot");
    assert!(b.reply("c1", "1"), "c1 answers: choice 1");
    let (req, out) = next(&mut rx).await;
    assert_eq!(
        (req.conversation_id.as_str(), out),
        ("c1", TurnOutcome::Replied("done: {\"answers\":[\"red\"]}".into()))
    );
    let (req, out) = next(&mut rx).await;
    assert_eq!((req.conversation_id.as_str(), out), ("c5", TurnOutcome::Replied("hi".into())), "then the fifth ran");
    for c in ["c2", "c3", "c4"] {
        assert!(b.reply(c, "blue"));
    }
    for _ in 0..3 {
        next(&mut rx).await;
    }
}

#[actix_rt::test]
async fn an_unanswered_question_times_out_to_its_fail_safe_and_frees_the_slot() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(Duration::from_millis(20), Default::default());
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(AskUserTool { broker: b.clone() })];
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(Echo::default()), tools), 1);
    s.submit(turn("c1", Origin::User, "ask me", BusyPolicy::Append));
    s.submit(turn("c2", Origin::User, "hello", BusyPolicy::Append));
    let (req, out) = next(&mut rx).await;
    assert_eq!(req.conversation_id, "c1");
    assert_eq!(out, TurnOutcome::Replied("done: {\"answers\":[\"blue\"]}".into()), "the recommended choice");
    assert!(b.pending_req("c1").is_none());
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("hi".into()));
}

#[actix_rt::test]
async fn an_overlapping_question_fail_safes_the_stale_one() {
    let b = broker(Duration::from_secs(30), Default::default());
    let q = |text: &str| super::broker::ClarifyRequest {
        question: text.into(),
        choices: vec!["x".into(), "y".into()],
        header: String::new(),
        recommended: None,
        timeout_s: 0,
        index: 0,
        total: 0,
        batch: String::new(),
    };
    let first = b.ask("c1", vec![q("first?")]);
    let second = b.ask("c1", vec![q("second?")]);
    let b2 = b.clone();
    let answer = async move {
        actix_rt::time::sleep(Duration::from_millis(2)).await;
        assert_eq!(b2.pending_req("c1").unwrap().question, "second?");
        b2.reply("c1", "y")
    };
    let (a1, a2, replied) = futures_util::future::join3(first, second, answer).await;
    assert!(replied);
    assert_eq!(a1, vec!["x"], "the stale question got its fail-safe");
    assert_eq!(a2, vec!["y"]);
}

#[derive(Default)]
struct Jobs {
    added: Cell<u32>,
}

impl CronJobs for Jobs {
    fn add(
        &self,
        _: &str,
        _: &crate::cron::tool::WhenSpec,
        _: &ToolCtx,
    ) -> Result<String, crate::cron::tool::JobError> {
        self.added.set(self.added.get() + 1);
        Ok(format!("job-{}", self.added.get()))
    }
    fn list(&self) -> Result<Vec<String>, crate::cron::store::JobsError> {
        Ok(Vec::new())
    }
    fn remove(&self, _: &str) -> Result<bool, crate::cron::store::JobsError> {
        Ok(false)
    }
}

#[actix_rt::test]
async fn a_cron_turn_calling_the_cron_tool_gets_a_refusal_not_a_job() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = Rc::new(Jobs::default());
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(CronTool { jobs: jobs.clone() })];
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(Echo::default()), tools), 4);
    s.submit(turn("cron:j1", Origin::Cron, "schedule another", BusyPolicy::Append));
    let (_, out) = next(&mut rx).await;
    let TurnOutcome::Replied(text) = out else { panic!("{out:?}") };
    assert!(text.contains("refused"), "{text}");
    assert_eq!(jobs.added.get(), 0);
    s.submit(turn("cli:1", Origin::User, "schedule a stretch", BusyPolicy::Append));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("done: scheduled job job-1".into()));
    assert_eq!(jobs.added.get(), 1);
}

#[actix_rt::test]
async fn an_injected_nudge_rides_a_user_reply_never_a_sentinel_or_cron_one() {
    use crate::executor::injector::{InjectorService, NudgeInjector, QueueInject};
    use crate::policy::{NudgePolicy, NudgePolicyService};
    use crate::store::keeper::MemoryKeeper;
    use crate::store::JsonStateStore;
    use crate::supervise::{start, Metrics, RestartPolicy};
    let dir = tempfile::tempdir().unwrap();
    let c = clock();
    let metrics = Metrics::default();
    let policy = start(
        NudgePolicyService::new(
            NudgePolicy::new(Default::default(), chrono_tz::Tz::UTC),
            Some(crate::policy::ledger_in(JsonStateStore::new(dir.path().join("state.json")))),
            c.shared(),
        ),
        &metrics,
        RestartPolicy::default(),
    );
    let injector = start(
        // The queues in the test double: the injector's rules do not depend on where they are kept.
        InjectorService::new(
            NudgeInjector::new(std::sync::Arc::new(MemoryKeeper::default()), chrono::Duration::hours(1), 3),
            policy,
            c.shared(),
        ),
        &metrics,
        RestartPolicy::default(),
    );
    let q = QueueInject {
        session: "cli:1".into(),
        nudge_id: "n1".into(),
        message: "your parcel arrived".into(),
        priority: raven_proto::Priority::Low,
        topic: "parcel".into(),
    };
    injector.call_async(q).await.unwrap().unwrap();
    let mut a = agent(dir.path(), Rc::new(Echo::default()), Vec::new());
    a.injector = Some(injector);
    let tracker = Rc::new(crate::feedback::NudgeFeedbackTracker::new(
        dir.path().join("feedback.jsonl"),
        Default::default(),
        chrono_tz::Tz::UTC,
    ));
    a.conversations = Some(Conversations::new(a.sessions.clone(), tracker.clone()));
    let (s, mut rx) = spine(a, 4);
    for origin in [Origin::Sentinel, Origin::Cron] {
        s.submit(turn("cli:1", origin, "proactive", BusyPolicy::Append));
        assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("hi".into()), "{origin:?} reply untouched");
    }
    s.submit(turn("cli:1", Origin::User, "hello", BusyPolicy::Append));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("hi\n\n— your parcel arrived".into()));
    let history = std::fs::read_to_string(dir.path().join("sessions/cli_1.jsonl")).unwrap();
    let lines: Vec<crate::sessions::SessionLine> = history.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The engine's own turns left nothing in the user's conversation; the inject is its own
    // proactive line, with its id and topic, after the reply it rode.
    let shape: Vec<(Role, &str, bool)> = lines.iter().map(|l| (l.role, l.content.as_str(), l.proactive)).collect();
    assert_eq!(
        shape,
        [(Role::User, "hello", false), (Role::Assistant, "hi", false), (Role::Assistant, "your parcel arrived", true)]
    );
    assert_eq!((lines[2].nudge_id.as_deref(), lines[2].topic.as_deref()), (Some("n1"), Some("parcel")));
    let records = tracker.records().unwrap();
    assert_eq!((records.len(), records[0].source), (1, crate::feedback::Source::Inject), "{records:?}");
}

#[actix_rt::test]
async fn user_inbound_hooks_run_for_user_turns_only() {
    struct Pick(Rc<Cell<u32>>);
    impl InboundHook for Pick {
        fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
            self.0.set(self.0.get() + 1);
            let answer = (req.content == "2").then(|| crate::sessions::Answer::Done("picked option 2".into()));
            Box::pin(async move { answer })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let seen = Rc::new(Cell::new(0));
    let provider = Rc::new(Echo::default());
    let mut a = agent(dir.path(), provider.clone(), Vec::new());
    a.inbound_hooks.push(Rc::new(Pick(seen.clone())));
    let (s, mut rx) = spine(a, 4);
    s.submit(turn("cli:1", Origin::Sentinel, "2", BusyPolicy::Append));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("hi".into()));
    assert_eq!(seen.get(), 0, "not a user turn");
    s.submit(turn("cli:1", Origin::User, "2", BusyPolicy::Append));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("picked option 2".into()));
    assert_eq!((seen.get(), provider.calls.get()), (1, 1), "consumed before the model was called");
}

#[actix_rt::test]
async fn an_inbound_message_answers_a_pending_question_instead_of_starting_a_turn() {
    use super::{dispatch_inbound, Inbound};
    let dir = tempfile::tempdir().unwrap();
    let asked = Rc::new(RefCell::new(Vec::new()));
    let b = broker(Duration::from_secs(30), asked.clone());
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(AskUserTool { broker: b.clone() })];
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(Echo::default()), tools), 4);
    let (first, _) = dispatch_inbound(&s, &b, turn("tg:7", Origin::User, "ask me", BusyPolicy::Append));
    assert_eq!(first, Inbound::Routed(Routed::Appended));
    while asked.borrow().is_empty() {
        actix_rt::time::sleep(Duration::from_millis(1)).await;
    }
    let (second, _) = dispatch_inbound(&s, &b, turn("tg:7", Origin::User, "2", BusyPolicy::Append));
    assert_eq!(second, Inbound::Answered, "the reply answered the question");
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("done: {\"answers\":[\"blue\"]}".into()));
    assert_eq!(s.queued("tg:7"), 0, "no turn was started for the answer");
}

#[actix_rt::test]
async fn only_a_user_turn_may_ask_the_user_a_background_turn_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let asked = Rc::new(RefCell::new(Vec::new()));
    let b = broker(Duration::from_secs(600), asked.clone());
    let tools: Vec<Rc<dyn Tool>> = vec![Rc::new(AskUserTool { broker: b.clone() })];
    let (s, mut rx) = spine(agent(dir.path(), Rc::new(Echo::default()), tools), 4);
    for origin in [Origin::Cron, Origin::Heartbeat, Origin::Subagent, Origin::Sentinel] {
        s.submit(turn("bg:1", origin, "ask me", BusyPolicy::Append));
        let (_, out) = next(&mut rx).await;
        let TurnOutcome::Replied(text) = out else { panic!("{out:?}") };
        // A micro-agent is not even offered it; the others are refused by the tool.
        let refused = match origin {
            Origin::Subagent => "no tool named `ask_user`",
            _ => "refused: ask_user is for the user's own turns",
        };
        assert!(text.contains(refused), "{origin:?}: {text}");
    }
    assert!(asked.borrow().is_empty(), "nothing was asked on a channel nobody answers");
}
