//! The gate while another process holds the state database: its writes wait on a blocking
//! thread, so the actor still answers, and the write lands once the peer lets go.

use super::*;
use crate::clock::ManualClock;
use crate::data_dir::DataDir;
use crate::store::owners::{self, Owner};
use crate::supervise::{start, Metrics, RestartPolicy};
use crate::testkit::peer::HeldDatabase;
use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use raven_proto::{Action, Priority};

fn nudge() -> Nudge {
    Nudge {
        action: Action::Nudge,
        session_key: Some("cli:1".into()),
        content: "Stretch your legs".into(),
        priority: Priority::Medium,
        topic: None,
        solicited: false,
    }
}

#[actix_rt::test]
async fn the_gate_answers_while_a_peer_holds_the_database_and_its_write_lands_after() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let ledger = ledger_in(owners::open(&dir, Owner::Policy).unwrap());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let service =
        NudgePolicyService::new(NudgePolicy::new(Default::default(), Tz::UTC), Some(ledger.clone()), clock.shared());
    let gate = start(service, &Metrics::default(), RestartPolicy::default());
    let peer = HeldDatabase::take(dir.state_db());
    let reserve = actix_rt::spawn({
        let gate = gate.clone();
        async move { gate.call_async(Reserve(nudge())).await }
    });
    for _ in 0..5 {
        actix_rt::task::yield_now().await;
    }
    let verdict = gate.call(Check(nudge())).await.unwrap();
    assert!(verdict.allow, "answered from what it knows: {verdict:?}");
    assert!(!reserve.is_finished(), "the reservation still waits for the peer");
    peer.release();
    let reserved = reserve.await.unwrap().unwrap().unwrap();
    assert!(matches!(reserved, Reservation::Held(..)), "{reserved:?}");
    assert_eq!(ledger.load().unwrap().0.fires.len(), 1, "the fire is kept");
    let again = gate.call(Check(nudge())).await.unwrap();
    assert!(!again.allow, "the gate knows its own fire once it landed: {again:?}");
}
