//! The wired engine: the attention.md watcher reaches the assembler, and an idle day costs
//! few LLM calls.

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::context::Assemble;
use crate::supervise::LocalBoxFuture;
use chrono::{Duration as D, TimeZone, Utc};
use raven_proto::{ExecutionResult, PlannerDecision};

struct Nowhere;

impl Router for Nowhere {
    fn route<'a>(
        &'a self,
        _: &'a PlannerDecision,
        _: &'a str,
    ) -> LocalBoxFuture<'a, ExecutionResult> {
        Box::pin(async { ExecutionResult::failed("no outlet in this test") })
    }
}

#[actix_rt::test]
async fn an_idle_day_of_48_ticks_makes_at_most_6_llm_calls() {
    let calls = super::sim::idle_day_llm_calls(48, D::minutes(30)).await;
    assert!(calls <= 6, "{calls} LLM calls");
    assert!(calls >= 1, "the planner was asked at least once");
}

#[actix_rt::test]
async fn a_hand_edit_of_attention_md_reaches_the_assembler_through_the_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
    let engine = Engine::start(
        &dir,
        &RavenConfig::default(),
        clock.shared(),
        Rc::new(Nowhere),
    )
    .unwrap();
    assert_eq!(engine.provider_name, "rules");
    std::fs::write(dir.attention(), "## Routines\nbefore\n").unwrap();
    let read = || async {
        engine
            .assembler
            .call(Assemble {
                now: clock.now(),
                policy: None,
            })
            .await
            .unwrap()
            .0
            .attention_md
    };
    // Let the first write's event arrive, then make sure the cache holds "before".
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !read().await.contains("before") && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(read().await.contains("before"));
    std::fs::write(dir.attention(), "## Routines\nafter the user's edit\n").unwrap();
    let mut seen = false;
    while std::time::Instant::now() < deadline + std::time::Duration::from_secs(5) {
        if read().await.contains("after the user's edit") {
            seen = true;
            break;
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(
        seen,
        "the watcher's change event invalidated the cached section"
    );
}
