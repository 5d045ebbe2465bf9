//! The execution paths end to end in-process: runner → policy → executor → outlet.

use super::injector::ApplyInjects;
use crate::clock::ManualClock;
use crate::config::RavenConfig;
use crate::data_dir::DataDir;
use crate::delivery::hub::{OutboxSnapshot, Post, PostError, RetryOutbox};
use crate::delivery::outlets::{Outlet, OutletError, WebhookOutlet, SECRET_HEADER};
use crate::engine::{Engine, Overrides};
use crate::feedback::tool::{nudge_feedback, ModelVerdict};
use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
use crate::policy::{PolicyState, Snapshot};
use crate::sentinel::{PollDeferred, Tick};
use crate::testkit::doubles::Scripted;
use chrono::{DateTime, Duration, TimeZone, Utc};
use raven_proto::{OutboundText, Priority};
use serde_json::json;
use std::rc::Rc;
use std::time::Duration as StdDuration;

fn noon() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
}

pub(super) struct Rig {
    _tmp: tempfile::TempDir,
    pub(super) dir: DataDir,
    pub(super) clock: ManualClock,
    provider: Scripted,
    pub(super) engine: Engine,
}

pub(super) fn rig_with(config: RavenConfig) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(noon());
    let provider = Scripted::answering(json!({"action": "skip", "reason": "r", "proactivity_score": 0}));
    let o = Overrides { provider: Some(Rc::new(provider.clone())), ..Overrides::default() };
    let engine = Engine::start_with(&dir, &config, clock.shared(), o).unwrap();
    Rig { _tmp: tmp, dir, clock, provider, engine }
}

pub(super) fn jsonl_config(path: &str) -> RavenConfig {
    let mut c = RavenConfig::default();
    c.delivery.jsonl_path = path.into();
    c.delivery.default_targets = vec!["jsonl:inbox".into()];
    c
}

pub(super) fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

impl Rig {
    pub(super) fn fires(&self) -> usize {
        crate::store::owners::open(&self.dir, crate::store::owners::Owner::Policy)
            .unwrap()
            .read::<PolicyState>("policy")
            .unwrap()
            .0
            .fires
            .len()
    }

    fn decide(&self, action: &str, target: &str, message: &str) {
        self.provider.set(Ok(json!({
            "action": action, "reason": "test", "proactivity_score": 0.8,
            "nudge_message": message, "target_session": target, "defer_condition": "the thread settles"
        })));
    }
}

#[actix_rt::test]
async fn each_nudge_action_flows_through_the_gate_to_the_jsonl_outlet() {
    let r = rig_with(jsonl_config("out.jsonl"));
    let out = r.dir.root().join("out.jsonl");

    r.decide("nudge", "jsonl:inbox", "Drink some water");
    let t = r.engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(t.route.to_string(), "nudge");
    assert!(t.result.unwrap().delivered);
    let l = lines(&out);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["content"], "Drink some water");
    assert_eq!(l[0]["proactive"], true);
    assert_eq!(r.fires(), 1, "recorded after the outlet accepted it");

    r.clock.advance(Duration::hours(1));
    r.decide("nudge_inject", "jsonl:chat", "Your parcel arrived");
    let t = r.engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(t.route.to_string(), "nudge_inject");
    assert_eq!(r.fires(), 1, "queued, not yet delivered");
    let reply =
        ApplyInjects { session: "jsonl:chat".into(), content: "Sure, done.".into(), origin: raven_proto::Origin::User };
    assert_eq!(r.engine.injector.call_async(reply).await.unwrap().0, "Sure, done.\n\n— Your parcel arrived");
    r.engine.policy.call(Snapshot).await.unwrap();
    assert_eq!(r.fires(), 2, "recorded when it rode the reply");

    r.clock.advance(Duration::hours(1));
    r.decide("nudge_defer", "jsonl:chat2", "When you have a minute: the invoice");
    let t = r.engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(t.route.to_string(), "nudge_defer");
    assert_eq!(lines(&out).len(), 1, "waiting for the thread to settle");
    let settled = r.engine.runner.call_async(PollDeferred).await.unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].route.to_string(), "deferred");
    let l = lines(&out);
    assert_eq!(l.len(), 2);
    assert_eq!(l[1]["content"], "When you have a minute: the invoice");
    assert_eq!(l[1]["chat_id"], "chat2");
    assert_eq!(r.fires(), 3);
    assert!(r.engine.runner.call_async(PollDeferred).await.unwrap().is_empty(), "fired once");
}

#[actix_rt::test]
async fn an_outlet_failure_charges_no_quota_lands_in_the_outbox_and_a_retry_delivers_once() {
    let r = rig_with(jsonl_config("blocked/out.jsonl"));
    // `blocked` is a file, so the outlet cannot create its file under it.
    std::fs::write(r.dir.root().join("blocked"), "in the way").unwrap();
    r.decide("nudge", "jsonl:inbox", "Pay the rent");
    let t = r.engine.runner.call_async(Tick).await.unwrap();
    let result = t.result.unwrap();
    assert!(!result.delivered);
    // The next tick decides the same nudge: the outbox keeps one copy, not two.
    r.clock.advance(Duration::seconds(10));
    r.engine.runner.call_async(Tick).await.unwrap();
    assert!(result.error.unwrap().contains("outbox"));
    assert_eq!(r.fires(), 0, "no quota charged");
    assert_eq!(r.engine.policy.call(Snapshot).await.unwrap().state.remaining_today, 8);
    let outbox = r.engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap();
    assert_eq!(outbox.entries.len(), 1);
    assert_eq!(outbox.entries[0].text.content, "Pay the rent");

    // Not yet due: the backoff holds it.
    assert_eq!(r.engine.hub.call_async(RetryOutbox).await.unwrap().unwrap().delivered, 0);
    std::fs::remove_file(r.dir.root().join("blocked")).unwrap();
    std::fs::create_dir(r.dir.root().join("blocked")).unwrap();
    r.clock.advance(Duration::minutes(1));
    let report = r.engine.hub.call_async(RetryOutbox).await.unwrap().unwrap();
    assert_eq!((report.delivered, report.still_queued), (1, 0));
    assert_eq!(r.engine.hub.call_async(RetryOutbox).await.unwrap().unwrap().delivered, 0);
    r.engine.policy.call(Snapshot).await.unwrap();
    assert_eq!(r.fires(), 1, "the late delivery is recorded then, so the gate knows it went out");
    let out = r.dir.root().join("blocked/out.jsonl");
    assert_eq!(lines(&out).len(), 1);
    // A redelivery of the same id is dropped by the receiver.
    let text = outbox.entries[0].text.clone();
    r.engine.hub.call_async(Post::text(text)).await.unwrap().unwrap();
    assert_eq!(lines(&out).len(), 1, "delivery ids make redelivery idempotent");
}

#[actix_rt::test]
async fn a_nudge_the_outlet_never_took_becomes_a_dead_letter_after_its_ttl_and_is_never_delivered_late() {
    let r = rig_with(jsonl_config("blocked/out.jsonl"));
    std::fs::write(r.dir.root().join("blocked"), "in the way").unwrap();
    r.decide("nudge", "jsonl:inbox", "Drink some water");
    assert!(!r.engine.runner.call_async(Tick).await.unwrap().result.unwrap().delivered);
    let waiting = r.engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap();
    assert_eq!(waiting.entries[0].expires_at, Some(crate::clock::Clock::now(&r.clock) + Duration::hours(6)));
    // The outlet is back, but only after the nudge's six hours.
    std::fs::remove_file(r.dir.root().join("blocked")).unwrap();
    std::fs::create_dir(r.dir.root().join("blocked")).unwrap();
    r.clock.advance(Duration::hours(6));
    let report = r.engine.hub.call_async(RetryOutbox).await.unwrap().unwrap();
    assert_eq!((report.delivered, report.still_queued), (0, 0));
    let outbox = r.engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap();
    assert_eq!(outbox.dead.len(), 1, "{outbox:?}");
    assert!(outbox.dead[0].why.starts_with("not delivered by"));
    assert!(lines(&r.dir.root().join("blocked/out.jsonl")).is_empty(), "news that late is no news");
    assert_eq!(r.fires(), 0);
}

mod webhook {
    use super::*;
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn text() -> OutboundText {
        OutboundText::proactive("n-1@webhook:42", "webhook", "42", "Stand up and stretch")
    }

    fn outlet(server: &MockServer, attempts: u32) -> WebhookOutlet {
        let url = format!("{}/hook", server.uri());
        WebhookOutlet::new(
            &url,
            Some("s3cret".into()),
            attempts,
            StdDuration::from_millis(2),
            StdDuration::from_secs(5),
        )
        .unwrap()
    }

    #[actix_rt::test]
    async fn posts_the_body_with_the_secret_header() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/hook"))
            .and(header(SECRET_HEADER, "s3cret"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
        outlet(&server, 3).deliver(&text()).await.unwrap();
        let reqs = server.received_requests().await.unwrap();
        assert_eq!(reqs.len(), 1);
        let body: serde_json::Value = serde_json::from_slice(&reqs[0].body).unwrap();
        assert_eq!(body["delivery_id"], "n-1@webhook:42");
        assert_eq!(body["chat_id"], "42");
        assert_eq!(body["content"], "Stand up and stretch");
        assert_eq!(body["proactive"], true);
    }

    #[actix_rt::test]
    async fn retries_on_503() {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(503)).up_to_n_times(2).mount(&server).await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(200)).mount(&server).await;
        outlet(&server, 3).deliver(&text()).await.unwrap();
        assert_eq!(server.received_requests().await.unwrap().len(), 3);
    }

    #[actix_rt::test]
    async fn gives_up_after_the_attempts_and_the_hub_keeps_the_message() {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(503)).mount(&server).await;
        let err = outlet(&server, 3).deliver(&text()).await.unwrap_err();
        assert!(matches!(err, OutletError::Transient(_)), "{err:?}");
        assert_eq!(server.received_requests().await.unwrap().len(), 3);

        let r = rig_with(RavenConfig::default());
        r.engine.hub.do_send(crate::delivery::hub::RegisterOutlet(std::sync::Arc::new(outlet(&server, 2))));
        let posted = r.engine.hub.call_async(Post::text(text())).await.unwrap();
        assert!(matches!(posted, Err(PostError::Queued(_))), "{posted:?}");
        let outbox = r.engine.hub.call_async(OutboxSnapshot).await.unwrap().unwrap();
        assert_eq!(outbox.entries.len(), 1);
        assert_eq!(outbox.entries[0].text, text());
        assert!(outbox.entries[0].last_error.contains("503"));
    }

    #[actix_rt::test]
    async fn a_4xx_is_refused_without_retries() {
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(401)).mount(&server).await;
        let err = outlet(&server, 3).deliver(&text()).await.unwrap_err();
        assert!(matches!(err, OutletError::Refused(_)));
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }
}

#[actix_rt::test]
async fn feedback_verdicts_retune_the_multiplier_on_the_next_tick() {
    let r = rig_with(RavenConfig::default());
    let tracker = NudgeFeedbackTracker::new(r.dir.feedback(), Default::default(), chrono_tz::Tz::UTC);
    let multiplier = || async { r.engine.policy.call(Snapshot).await.unwrap().state.adaptive_multiplier };
    let give = |ids: std::ops::Range<u32>, verdict: &'static str| {
        for i in ids.clone() {
            tracker
                .record_dispatched(
                    &Dispatch::new(format!("n{i}"), "water", Priority::Low, Source::Sentinel),
                    Some("cli:1"),
                    true,
                    noon(),
                )
                .unwrap();
        }
        ids.map(move |i| (format!("n{i}"), verdict)).collect::<Vec<_>>()
    };
    let call = |calls: Vec<(String, &'static str)>| {
        let tracker = &tracker;
        async move {
            for (id, verdict) in calls {
                let given = ModelVerdict { verdict, nudge_id: &id, reason: "test", session: "cli:1" };
                nudge_feedback(tracker, given, noon()).unwrap();
            }
        }
    };
    // Ten accepted: below the loosening volume gate (15), nothing moves.
    call(give(0..10, "accepted")).await;
    r.engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(multiplier().await, 1.0);
    // Five more: past the gate, loosened.
    call(give(10..15, "accepted")).await;
    r.clock.advance(Duration::minutes(30));
    r.engine.runner.call_async(Tick).await.unwrap();
    assert_eq!(multiplier().await, 1.5);
    // Thirty dismissals: acceptance 15/45, tightened on the next tick.
    call(give(15..45, "dismissed")).await;
    r.clock.advance(Duration::minutes(30));
    r.engine.runner.call_async(Tick).await.unwrap();
    let m = multiplier().await;
    assert!(m < 1.0, "{m}");
    // An unknown id is a clear error for the LLM, and nothing is recorded.
    let given = ModelVerdict { verdict: "accepted", nudge_id: "n-nope", reason: "", session: "cli:1" };
    let err = nudge_feedback(&tracker, given, noon()).unwrap_err();
    assert!(err.contains("n-nope"));
    let given = ModelVerdict { verdict: "meh", nudge_id: "n1", reason: "", session: "cli:1" };
    let err = nudge_feedback(&tracker, given, noon()).unwrap_err();
    assert!(err.contains("unknown verdict"));
}

#[actix_rt::test]
async fn a_nudge_for_a_channel_with_no_outlet_is_refused_not_queued() {
    let out = tempfile::tempdir().unwrap();
    let r = rig_with(jsonl_config(out.path().join("out.jsonl").to_str().unwrap()));
    r.decide("nudge", "telegram:42", "Your parcel arrived");
    let t = r.engine.runner.call_async(Tick).await.unwrap();
    let error = t.result.and_then(|x| x.error).unwrap_or_default();
    assert!(error.contains("no outlet delivers to channel `telegram`"), "{error}");
    let waiting = r.engine.hub.call_async(crate::delivery::hub::OutboxSnapshot).await.unwrap().unwrap();
    assert!(waiting.entries.is_empty(), "nothing waits for an outlet that will never come: {waiting:?}");
    assert_eq!(r.fires(), 0, "a refused dispatch charges nothing");
}

#[actix_rt::test]
async fn an_inject_the_gate_holds_at_reply_time_rides_a_later_reply() {
    let r = rig_with(jsonl_config("out.jsonl"));
    for (message, minutes) in [("Your parcel arrived", 0), ("The library book is due", 1)] {
        r.clock.advance(Duration::minutes(minutes));
        r.decide("nudge_inject", "jsonl:chat", message);
        assert_eq!(r.engine.runner.call_async(Tick).await.unwrap().route.to_string(), "nudge_inject");
    }
    let reply = |content: &str| ApplyInjects {
        session: "jsonl:chat".into(),
        content: content.into(),
        origin: raven_proto::Origin::User,
    };
    let (first, riding) = r.engine.injector.call_async(reply("Sure.")).await.unwrap();
    assert_eq!((first.as_str(), riding.len()), ("Sure.\n\n— Your parcel arrived", 1));
    // The session's cooldown holds the second: it waits, it is not dropped.
    let (held, riding) = r.engine.injector.call_async(reply("Ok.")).await.unwrap();
    assert_eq!((held.as_str(), riding.len()), ("Ok.", 0));
    r.clock.advance(Duration::minutes(45));
    let (later, _) = r.engine.injector.call_async(reply("Noted.")).await.unwrap();
    assert_eq!(later, "Noted.\n\n— The library book is due");
    r.engine.policy.call(Snapshot).await.unwrap();
    assert_eq!(r.fires(), 2, "each recorded once, when it rode");
}
