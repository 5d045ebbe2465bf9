//! The Planner against a real HTTP server on 127.0.0.1 (wiremock), and the rules provider.

use super::*;
use crate::llm::openai::OpenAiProvider;
use crate::llm::provider::SharedProvider;
use chrono::{TimeZone, Utc};
use raven_proto::{Action, Priority};
use serde_json::{json, Value};
use std::rc::Rc;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn ctx() -> PlannerContext {
    PlannerContext::empty(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap())
}

fn tool_reply(args: Value) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "planner_decision", "arguments": args.to_string()}}]}}]})
}

async fn planner_against(template: ResponseTemplate, timeout: Duration) -> (Planned, MockServer) {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/chat/completions")).respond_with(template).mount(&server).await;
    let provider =
        OpenAiProvider::new(&format!("{}/v1", server.uri()), "test-model", Some("sk-test".into()), timeout).unwrap();
    let planner = ProactivePlanner::new(Rc::new(provider) as SharedProvider);
    (planner.decide(ctx()).await, server)
}

async fn decide_with(args: Value) -> Planned {
    planner_against(ResponseTemplate::new(200).set_body_json(tool_reply(args)), Duration::from_secs(5)).await.0
}

#[actix_rt::test]
async fn each_action_from_a_valid_tool_call() {
    let cases = [
        (json!({"action": "skip", "reason": "quiet", "proactivity_score": 0.1}), Action::Skip),
        (
            json!({"action": "nudge", "reason": "r", "proactivity_score": 0.8, "priority": "high", "nudge_message": "Taxes due at 5"}),
            Action::Nudge,
        ),
        (
            json!({"action": "nudge_inject", "reason": "r", "proactivity_score": 0.6, "nudge_message": "btw", "target_session": "cli:1"}),
            Action::NudgeInject,
        ),
        (
            json!({"action": "nudge_defer", "reason": "r", "proactivity_score": 0.6, "nudge_message": "later", "defer_condition": "thread settles", "target_session": "cli:1"}),
            Action::NudgeDefer,
        ),
        (
            json!({"action": "spawn_agent", "reason": "r", "proactivity_score": 0.7, "spawn_task": "digest the inbox"}),
            Action::SpawnAgent,
        ),
    ];
    for (args, want) in cases {
        let planned = decide_with(args.clone()).await;
        assert_eq!(planned.error, None, "{args}");
        assert_eq!(planned.decision.action, want, "{args}");
    }
    let p = decide_with(json!({"action": "nudge", "reason": "r", "proactivity_score": 0.8, "priority": "high", "nudge_message": "Taxes due at 5"})).await;
    assert_eq!(p.decision.priority, Priority::High);
    assert_eq!(p.decision.nudge_message.as_deref(), Some("Taxes due at 5"));
}

#[actix_rt::test]
async fn the_request_carries_the_pinned_parameters_and_the_tool_schema() {
    let (planned, server) = planner_against(
        ResponseTemplate::new(200)
            .set_body_json(tool_reply(json!({"action": "skip", "reason": "r", "proactivity_score": 0}))),
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(planned.decision.action, Action::Skip);
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.headers.get("authorization").unwrap(), "Bearer sk-test");
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], PLANNER_GENERATION.max_tokens);
    assert_eq!(body["temperature"], PLANNER_GENERATION.temperature);
    assert!(body.get("reasoning_effort").is_none() && body.get("reasoning").is_none());
    assert_eq!(body["tool_choice"]["function"]["name"], "planner_decision");
    let tool = &body["tools"][0]["function"];
    assert_eq!(tool["name"], "planner_decision");
    assert_eq!(tool["parameters"]["required"], json!(["action", "reason", "proactivity_score"]));
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(body["messages"][0]["content"].as_str().unwrap().contains("Default to skip"));
    assert!(body["messages"][1]["content"].as_str().unwrap().contains("adaptive multiplier"));
}

#[actix_rt::test]
async fn every_failure_degrades_to_skip_with_the_reason() {
    let five_s = Duration::from_secs(5);
    let cases: Vec<(ResponseTemplate, Duration, &str)> = vec![
        (ResponseTemplate::new(500).set_body_string("boom"), five_s, "HTTP 500"),
        (ResponseTemplate::new(200).set_body_json(tool_reply(json!({}))).set_delay(Duration::from_secs(3)), Duration::from_millis(200), "timed out"),
        (ResponseTemplate::new(200).set_body_string("<html>not json</html>"), five_s, "web page"),
        (ResponseTemplate::new(200).set_body_string("{not json"), five_s, "not JSON"),
        (ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"role": "assistant", "content": "I think you should skip."}}]})), five_s, "no_tool_call"),
        (
            ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "planner_decision", "arguments": "[1,2]"}}]}}]})),
            five_s,
            "args_not_object",
        ),
        (
            ResponseTemplate::new(200).set_body_json(json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "planner_decision", "arguments": "{not json"}}]}}]})),
            five_s,
            "args_not_object",
        ),
    ];
    for (template, timeout, want) in cases {
        let (planned, _server) = planner_against(template, timeout).await;
        assert_eq!(planned.decision.action, Action::Skip, "{want}");
        let err = planned.error.unwrap_or_default();
        assert!(err.contains(want), "wanted {want:?} in {err:?}");
        assert!(planned.decision.reason.starts_with("planner_error:"), "{}", planned.decision.reason);
    }
}

#[actix_rt::test]
async fn invalid_fields_are_validated_as_the_spec_says() {
    let p =
        decide_with(json!({"action": "party", "reason": "r", "proactivity_score": 0.5, "nudge_message": "x"})).await;
    assert_eq!(p.decision.action, Action::Skip);
    assert!(p.decision.reason.contains("invalid_action"));
    let p = decide_with(
        json!({"action": "nudge", "reason": "r", "proactivity_score": 0.5, "priority": "urgent", "nudge_message": "x"}),
    )
    .await;
    assert_eq!((p.decision.action, p.decision.priority), (Action::Nudge, Priority::Low));
    let p =
        decide_with(json!({"action": "nudge", "reason": "r", "proactivity_score": 7.0, "nudge_message": "x"})).await;
    assert_eq!(p.decision.proactivity_score, 1.0);
    let p = decide_with(json!({"action": "nudge", "reason": "r", "proactivity_score": 0.5})).await;
    assert_eq!(p.decision.action, Action::Skip);
    assert!(p.decision.reason.contains("nudge_without_nudge_message"), "{}", p.decision.reason);
}

#[actix_rt::test]
async fn an_unreachable_endpoint_is_a_skip_too() {
    let provider = OpenAiProvider::new("http://127.0.0.1:9/v1", "m", None, Duration::from_secs(2)).unwrap();
    let planned = ProactivePlanner::new(Rc::new(provider)).decide(ctx()).await;
    assert_eq!(planned.decision.action, Action::Skip);
    assert!(planned.error.is_some());
}

mod rules {
    use super::super::rules::RulesProvider;
    use super::*;
    use chrono::Duration as D;
    use raven_proto::{ActiveSession, Routine};

    async fn decide(ctx: PlannerContext) -> PlannerDecision {
        let planner = ProactivePlanner::new(Rc::new(RulesProvider::new(chrono_tz::Tz::UTC)));
        let planned = planner.decide(ctx).await;
        assert_eq!(planned.error, None);
        planned.decision
    }

    fn active(ctx: &mut PlannerContext) {
        ctx.active_sessions.push(ActiveSession {
            session_key: "cli:1".into(),
            last_active: ctx.now - D::minutes(2),
            last_user_message: Some("hi".into()),
            last_assistant_message: None,
        });
    }

    #[actix_rt::test]
    async fn an_imminent_deadline_is_a_high_nudge() {
        let mut c = ctx();
        c.memory_md = "- [ ] File taxes due: 2026-03-02 12:30\n".into();
        let d = decide(c).await;
        assert_eq!((d.action, d.priority), (Action::Nudge, Priority::High));
        assert!(d.nudge_message.unwrap().contains("File taxes"));
    }

    #[actix_rt::test]
    async fn a_private_deadline_never_goes_to_a_group_the_user_last_wrote_from() {
        let mut c = ctx();
        c.memory_md = "- [ ] Pick up the test results due: 2026-03-02 12:30\n".into();
        let group = |key: &str, ago: i64| ActiveSession {
            session_key: key.into(),
            last_active: c.now - D::minutes(ago),
            last_user_message: Some("see you all at 8".into()),
            last_assistant_message: None,
        };
        c.active_sessions = vec![group("telegram:-100123", 1)];
        let d = decide(c.clone()).await;
        assert_eq!((d.action, d.target_session.as_deref()), (Action::Nudge, None), "to the default targets");
        c.active_sessions.push(group("telegram:111", 30));
        assert_eq!(decide(c).await.target_session.as_deref(), Some("telegram:111"));
    }

    #[actix_rt::test]
    async fn a_routine_at_its_hour_rides_the_active_session() {
        let mut c = ctx();
        c.routines.push(Routine { topic: "medication".into(), hour: 12, days_seen: 4, days: Default::default() });
        active(&mut c);
        let d = decide(c).await;
        assert_eq!(d.action, Action::NudgeInject);
        assert_eq!(d.target_session.as_deref(), Some("cli:1"));
    }

    #[actix_rt::test]
    async fn a_weekday_routine_keeps_quiet_at_the_weekend() {
        let mut c = ctx();
        let days = raven_proto::RoutineDays::Weekdays;
        c.routines.push(Routine { topic: "standup".into(), hour: 12, days_seen: 10, days });
        assert_eq!(decide(c.clone()).await.action, Action::Nudge, "Monday at its hour");
        c.now += D::days(5);
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "Saturday at its hour");
        let plan =
            crate::context::plan::plan_for_day(c.now, chrono_tz::UTC, &c.routines, &[], crate::time::Language::English);
        assert!(plan.is_empty(), "no slot in Saturday's plan either: {plan:?}");
    }

    /// The morning brief listed the routine (its topic is in the fire history since this
    /// morning): it is not nudged again today; said yesterday, it is.
    #[actix_rt::test]
    async fn a_routine_said_today_already_is_not_said_again() {
        let mut c = ctx();
        c.routines.push(Routine { topic: "medication".into(), hour: 12, days_seen: 4, days: Default::default() });
        let said = |at| raven_proto::TopicFireHistory { fired: 1, last_fired: Some(at), dismissed: 0, accepted: 0 };
        c.fire_history.insert("medication".into(), said(c.now - D::hours(5)));
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "told in this morning's brief");
        c.fire_history.insert("medication".into(), said(c.now - D::hours(13)));
        assert_eq!(decide(c).await.action, Action::Nudge, "told yesterday");
    }

    /// A kind the user asked to hear of earlier (`ctx.earlier_kinds`) gets its heads-up twice
    /// as far ahead: the rent six days before instead of three.
    #[actix_rt::test]
    async fn a_kind_asked_earlier_gets_its_heads_up_twice_as_far_ahead() {
        let mut c = ctx();
        c.memory_md = "- [ ] Pay the rent due: 2026-03-08\n".into();
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "six days ahead: not yet");
        c.earlier_kinds.insert("payment".into(), 1);
        let d = decide(c).await;
        assert_eq!(d.action, Action::Nudge);
        assert_eq!(d.nudge_message.as_deref(), Some("Heads-up: Pay the rent is due on Sun 8 Mar."));
    }

    #[actix_rt::test]
    async fn a_later_deadline_waits_for_an_active_conversation() {
        let mut c = ctx();
        c.memory_md = "- [ ] Send the report due: 2026-03-02 20:00\n".into();
        active(&mut c);
        let d = decide(c.clone()).await;
        assert_eq!(d.action, Action::NudgeDefer);
        assert!(d.defer_condition.is_some());
        c.active_sessions.clear();
        assert_eq!(decide(c).await.action, Action::Nudge);
    }

    #[actix_rt::test]
    async fn timed_notes_within_the_hour_take_turns_and_one_reminded_is_not_proposed_again() {
        let mut c = ctx();
        c.memory_md = "- [ ] Water the geraniums due: 2026-03-02 11:40\n\
                       - [ ] Phone the accountant due: 2026-03-02 12:10\n\
                       - [ ] Fetch the parcel due: 2026-03-02 12:25\n\
                       - [ ] Feed the goldfish due: 2026-03-02 12:55\n"
            .into();
        let reminded = |at: chrono::DateTime<Utc>| raven_proto::TopicFireHistory {
            fired: 1,
            last_fired: Some(at),
            ..Default::default()
        };
        c.fire_history.insert("geranium".into(), reminded(c.now - D::minutes(75)));
        c.fire_history.insert("accountant".into(), reminded(c.now - D::minutes(45)));
        let d = decide(c.clone()).await;
        assert_eq!((d.action, d.priority), (Action::Nudge, Priority::High));
        assert!(d.nudge_message.as_deref().unwrap().contains("parcel"), "{:?}", d.nudge_message);

        // Reminded the day before (a heads-up) is not reminded within the hour: that one still comes.
        c.fire_history.insert("parcel".into(), reminded(c.now - D::hours(20)));
        assert!(decide(c.clone()).await.nudge_message.unwrap().contains("parcel"));
        c.fire_history.insert("parcel".into(), reminded(c.now - D::minutes(10)));
        assert!(decide(c.clone()).await.nudge_message.unwrap().contains("goldfish"), "its hour began after that one");
        c.fire_history.insert("goldfish".into(), reminded(c.now));
        assert_eq!(decide(c).await.action, Action::Skip, "each was reminded once");
    }

    #[actix_rt::test]
    async fn a_note_that_asks_for_a_lead_gets_a_heads_up_then_and_again_the_day_before() {
        // Monday 2 March 2026; the anniversary is on Tuesday the 10th.
        let mut c = ctx();
        c.memory_md = "3/10 结婚纪念日 提前一周订餐厅\n- [ ] Renew the insurance due: 2026-03-09 12:00, a week before call the broker\n".into();
        c.now -= D::hours(2);
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "more than a week ahead: not yet");
        c.now += D::days(1) + D::hours(3);
        let d = decide(c.clone()).await;
        assert_eq!(d.action, Action::Nudge, "{d:?}");
        let said = d.nudge_message.unwrap();
        assert!(said.starts_with("Heads-up: ") && said.contains("Renew the insurance"), "the earlier first: {said}");
        assert!(d.reason.contains("asks to hear of it 1 week before"), "{}", d.reason);

        let fired = |at| raven_proto::TopicFireHistory { fired: 1, last_fired: Some(at), ..Default::default() };
        c.fire_history.insert("insurance".into(), fired(c.now));
        // A week before the 10th is the 3rd, from its start.
        let d = decide(c.clone()).await;
        assert!(d.nudge_message.as_deref().is_some_and(|m| m.contains("结婚纪念日")), "{d:?}");
        let topic = crate::policy::topic::topic_of("结婚纪念日 订餐厅");
        c.fire_history.insert(topic.clone(), fired(c.now));
        c.now += D::days(2);
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "once in the lead window");

        // The day before each: the heads-up of its day comes as well.
        c.now = Utc.with_ymd_and_hms(2026, 3, 8, 13, 0, 0).unwrap();
        let d = decide(c.clone()).await;
        assert!(d.nudge_message.as_deref().unwrap_or_default().ends_with("is due tomorrow at 12:00."), "{d:?}");
    }

    #[actix_rt::test]
    async fn a_note_without_a_lead_gets_the_heads_up_its_kind_needs() {
        // Monday 2 March 2026: the nanny is paid on Monday the 9th (a payment: three days
        // ahead), the dentist is that day too (an appointment: the day before only), the
        // table for the anniversary is booked for the 14th (a booking: a week ahead).
        let mut c = ctx();
        c.memory_md =
            "Pay the nanny on March 9\nDentist on March 9 at 10am\nBook a table at Luigi's on March 14\n".into();
        let d = decide(c.clone()).await;
        assert_eq!(d.action, Action::Skip, "nothing needs a word yet: {d:?}");
        c.now = Utc.with_ymd_and_hms(2026, 3, 6, 9, 0, 0).unwrap();
        let d = decide(c.clone()).await;
        assert!(d.nudge_message.as_deref().unwrap_or_default().contains("Pay the nanny"), "{d:?}");
        assert!(d.reason.contains("a payment gets a heads-up 3 days before"), "{}", d.reason);
        let fired = |at| raven_proto::TopicFireHistory { fired: 1, last_fired: Some(at), ..Default::default() };
        c.fire_history.insert("nanny".into(), fired(c.now));
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "the table is not a week off yet");
        c.now = Utc.with_ymd_and_hms(2026, 3, 7, 9, 0, 0).unwrap();
        let d = decide(c.clone()).await;
        assert!(
            d.nudge_message.as_deref().unwrap_or_default().contains("Book a table"),
            "a week before the 14th: {d:?}"
        );
        assert!(d.reason.contains("a booking gets a heads-up 1 week before"), "{}", d.reason);
        c.fire_history.insert(crate::policy::topic::topic_of("Book a table at Luigi's"), fired(c.now));
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "the dentist waits for the day before");
        c.now = Utc.with_ymd_and_hms(2026, 3, 8, 12, 0, 0).unwrap();
        let d = decide(c.clone()).await;
        assert!(d.nudge_message.as_deref().unwrap_or_default().contains("Dentist"), "{d:?}");
    }

    #[actix_rt::test]
    async fn a_heads_up_that_came_late_in_its_lead_covers_the_day_before() {
        // The report is due Tuesday 11:00 and first read on Monday 07:00, a day and 4 hours
        // ahead: one heads-up, not a second one four hours later, then its reminder.
        let mut c = ctx();
        c.memory_md = "- [ ] Submit the quarterly report due: 2026-03-03 11:00\n".into();
        c.now = Utc.with_ymd_and_hms(2026, 3, 2, 7, 0, 0).unwrap();
        let d = decide(c.clone()).await;
        assert!(d.reason.contains("3 days before"), "{d:?}");
        let fired = |at| raven_proto::TopicFireHistory { fired: 1, last_fired: Some(at), ..Default::default() };
        c.fire_history.insert("quarterly".into(), fired(c.now));
        c.now = Utc.with_ymd_and_hms(2026, 3, 2, 13, 0, 0).unwrap();
        assert_eq!(decide(c.clone()).await.action, Action::Skip, "the day before is covered");
        c.now = Utc.with_ymd_and_hms(2026, 3, 3, 10, 30, 0).unwrap();
        let d = decide(c.clone()).await;
        assert_eq!((d.action, d.priority), (Action::Nudge, Priority::High), "its reminder: {d:?}");
    }

    #[actix_rt::test]
    async fn nothing_due_is_a_skip() {
        assert_eq!(decide(ctx()).await.action, Action::Skip);
    }
}
