//! The gate under concurrency: eight dispatchers (two policy actors on one state file, as
//! two processes would be, four dispatchers each) send bursts at the same moment. Whatever
//! the interleaving and whichever dispatches fail, never more deliveries than the day cap and
//! never the same content twice inside the dedup window.

use super::*;
use crate::clock::ManualClock;
use crate::config::PolicyConfig;
use crate::store::JsonStateStore;
use crate::supervise::{start, Handle, Metrics, RestartPolicy};
use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;
use raven_proto::{Action, Priority};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

const DAY_CAP: u32 = 3;
const CONTENTS: [&str; 5] = [
    "Water the plants before the heat",
    "Send the invoice to Dana",
    "Pack the gym bag for tonight",
    "Call the dentist about Friday",
    "Renew the parking permit",
];

/// Only the day cap and the dedup window can bind: the hour quota, cooldowns and topic
/// stack are opened wide.
fn config() -> PolicyConfig {
    PolicyConfig {
        max_per_day: DAY_CAP,
        max_per_hour: 100,
        session_cooldown_minutes: 0,
        topic_max_per_hour: 100,
        topic_max_per_day: 100,
        topic_max_per_week: 100,
        ..PolicyConfig::default()
    }
}

fn policy_actor(path: &Path, clock: &ManualClock) -> Handle<NudgePolicyService> {
    let store = Some(crate::policy::ledger_in(JsonStateStore::new(path)));
    let service = NudgePolicyService::new(NudgePolicy::new(config(), Tz::UTC), store, clock.shared());
    start(service, &Metrics::default(), RestartPolicy::default())
}

/// One dispatch of a burst: which text, to which session, and whether the outlet fails.
#[derive(Debug, Clone)]
struct Send {
    content: usize,
    session: u8,
    fails: bool,
}

fn send() -> impl Strategy<Value = Send> {
    (0..CONTENTS.len(), 0u8..3, proptest::bool::weighted(0.2)).prop_map(|(content, session, fails)| Send {
        content,
        session,
        fails,
    })
}

/// Runs the eight dispatchers concurrently; returns the contents delivered.
fn run(bursts: Vec<Vec<Send>>) -> Vec<&'static str> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    actix_rt::System::new().block_on(async move {
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
        let actors = [policy_actor(&path, &clock), policy_actor(&path, &clock)];
        let delivered = Rc::new(RefCell::new(Vec::new()));
        let dispatchers = bursts.into_iter().enumerate().map(|(i, burst)| {
            let policy = actors[i % 2].clone();
            let delivered = delivered.clone();
            async move {
                for s in burst {
                    let nudge = Nudge {
                        action: Action::Nudge,
                        session_key: Some(format!("cli:{}", s.session)),
                        content: CONTENTS[s.content].to_owned(),
                        priority: Priority::Low,
                        topic: None,
                        solicited: false,
                    };
                    let delivered = delivered.clone();
                    let _: Gated<(), ()> = dispatch_through(&policy, nudge, || async move {
                        // The outlet takes its time, so other dispatchers run meanwhile.
                        actix_rt::task::yield_now().await;
                        if s.fails {
                            return Err(());
                        }
                        delivered.borrow_mut().push(CONTENTS[s.content]);
                        Ok(())
                    })
                    .await;
                }
            }
        });
        futures_util::future::join_all(dispatchers).await;
        let out = delivered.borrow().clone();
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn eight_concurrent_dispatchers_never_pass_the_day_cap_or_repeat_a_text(
        bursts in proptest::collection::vec(proptest::collection::vec(send(), 1..5), 8..=8)
    ) {
        let none_fail = bursts.iter().flatten().all(|s| !s.fails);
        let delivered = run(bursts);
        prop_assert!(delivered.len() as u32 <= DAY_CAP, "{} delivered past a cap of {DAY_CAP}: {delivered:?}", delivered.len());
        let mut seen = std::collections::BTreeSet::new();
        for c in &delivered {
            prop_assert!(seen.insert(*c), "`{c}` delivered twice inside the dedup window: {delivered:?}");
        }
        // The gate is not simply shut: with every outlet up, the first reservation goes out.
        prop_assert!(!none_fail || !delivered.is_empty(), "nothing delivered");
    }
}
