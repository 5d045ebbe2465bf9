//! The inject queues and the defer heap while another process holds the state database: their
//! writes wait on a blocking thread, so the actors still answer, and land once the peer lets go.

use super::defer::{DeferManager, DeferService, Poll, Register};
use super::injector::{queues_in, ApplyInjects, InjectorService, NudgeInjector, QueueInject};
use crate::clock::ManualClock;
use crate::data_dir::DataDir;
use crate::policy::{ledger_in, NudgePolicy, NudgePolicyService};
use crate::store::owners::{self, Owner};
use crate::supervise::{start, Metrics, RestartPolicy};
use crate::testkit::peer::HeldDatabase;
use chrono::{TimeZone, Utc};
use raven_proto::{Origin, PlannerDecision, Priority};

async fn settle() {
    for _ in 0..5 {
        actix_rt::task::yield_now().await;
    }
}

#[actix_rt::test]
async fn the_defer_heap_answers_while_a_peer_holds_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let manager = DeferManager::in_data_dir(&dir, &Default::default()).unwrap();
    let defer = start(DeferService::new(manager, clock.shared()), &Metrics::default(), RestartPolicy::default());
    let peer = HeldDatabase::take(dir.state_db());
    let register = actix_rt::spawn({
        let defer = defer.clone();
        let decision = PlannerDecision { nudge_message: Some("Call the bank".into()), ..PlannerDecision::skip("") };
        async move { defer.call_async(Register { id: "d1".into(), decision }).await }
    });
    settle().await;
    let polled = defer.call_async(Poll).await.unwrap().unwrap();
    assert!(polled.settled.is_empty(), "answered: nothing waited yet");
    assert!(!register.is_finished(), "the registration still waits for the peer");
    peer.release();
    register.await.unwrap().unwrap().unwrap();
    let polled = defer.call_async(Poll).await.unwrap().unwrap();
    assert_eq!(polled.settled.len(), 1, "the deferred nudge was kept, and settles (no session)");
}

#[actix_rt::test]
async fn the_inject_queues_answer_while_a_peer_holds_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let metrics = Metrics::default();
    let ledger = ledger_in(owners::open(&dir, Owner::Policy).unwrap());
    let gate =
        NudgePolicyService::new(NudgePolicy::new(Default::default(), chrono_tz::Tz::UTC), Some(ledger), clock.shared());
    let gate = start(gate, &metrics, RestartPolicy::default());
    let queues =
        NudgeInjector::new(queues_in(owners::open(&dir, Owner::Injector).unwrap()), chrono::Duration::hours(1), 3);
    let injector = start(InjectorService::new(queues, gate, clock.shared()), &metrics, RestartPolicy::default());
    let peer = HeldDatabase::take(dir.state_db());
    let queue = actix_rt::spawn({
        let injector = injector.clone();
        let q = QueueInject {
            session: "cli:1".into(),
            nudge_id: "n1".into(),
            message: "your parcel arrived".into(),
            priority: Priority::Low,
            topic: "parcel".into(),
        };
        async move { injector.call_async(q).await }
    });
    settle().await;
    let reply = |content: &str| ApplyInjects { session: "cli:1".into(), content: content.into(), origin: Origin::User };
    let (content, riding) = injector.call_async(reply("hello")).await.unwrap();
    assert_eq!((content.as_str(), riding.len()), ("hello", 0), "a reply goes out meanwhile, with nothing riding");
    assert!(!queue.is_finished(), "the inject still waits for the peer");
    peer.release();
    queue.await.unwrap().unwrap().unwrap();
    let (content, riding) = injector.call_async(reply("hi")).await.unwrap();
    assert_eq!(riding.len(), 1, "the inject was kept and rides the next reply: {content}");
}
