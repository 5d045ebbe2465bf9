use super::*;
use crate::discovery::pending::tests::t0;
use crate::llm::provider::{Provider, ProviderError, ProviderReply};
use crate::supervise::LocalBoxFuture;
use chrono::Duration;
use std::rc::Rc;

/// A live menu of `n` options for `cli:local`, option 2 behind a confirm step when asked.
fn menu(n: usize, confirm_second: bool) -> PendingDecision {
    let mut m = crate::discovery::pending::tests::menu("cli:local", n);
    if confirm_second {
        m.options[1].confirm = true;
    }
    m
}

fn router(dir: &tempfile::TempDir, classifier: Option<SharedProvider>) -> DecisionRouter {
    DecisionRouter {
        store: PendingDecisionStore::new(crate::store::JsonStateStore::new(dir.path().join("pending.json"))),
        classifier,
        threshold: 0.8,
    }
}

/// Answers the classifier with a fixed pick and confidence.
struct Classifier(u64, f64);

impl Provider for Classifier {
    fn name(&self) -> &str {
        "test"
    }
    fn complete<'a>(&'a self, _: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let arguments = json!({"choice": self.0, "confidence": self.1});
        Box::pin(async move { Ok(ProviderReply::call(CLASSIFY_TOOL, arguments)) })
    }
}

#[test]
fn replies_are_read_without_a_model() {
    assert_eq!(parse_reply(" 2 "), Said::Pick { menu: None, n: 2 });
    assert_eq!(parse_reply("/pick 9"), Said::Pick { menu: None, n: 9 });
    assert_eq!(parse_reply("/pick m3 1"), Said::Pick { menu: Some("m3".into()), n: 1 });
    assert_eq!(parse_reply("Yes!"), Said::Yes);
    assert_eq!(parse_reply("no"), Said::No);
    assert_eq!(parse_reply("2 coffees please"), Said::Other);
    assert_eq!(parse_reply("/pick"), Said::Other);
}

#[actix_rt::test]
async fn a_number_in_range_runs_once_and_one_out_of_range_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(&dir, None);
    let m = r.store.offer(menu(3, false), t0()).unwrap();
    let out = r.route("cli:local", "/pick 9", t0()).await.unwrap();
    assert_eq!(out, Routed::Answer("There is no option 9: pick 1–3 (menu m1).".into()));
    assert!(r.store.live_for("cli:local", t0()).unwrap().is_some(), "still open");
    match r.route("cli:local", "2", t0()).await.unwrap() {
        Routed::Run { menu, choice } => assert_eq!((menu.id, choice), (m.id, 1)),
        other => panic!("{other:?}"),
    }
    assert_eq!(r.route("cli:local", "2", t0()).await.unwrap(), Routed::PassThrough, "settled: a number is just text");
}

#[actix_rt::test]
async fn a_confirm_step_runs_only_after_yes_and_no_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(&dir, None);
    r.store.offer(menu(3, true), t0()).unwrap();
    let ask = r.route("cli:local", "2", t0()).await.unwrap();
    assert!(matches!(&ask, Routed::Answer(a) if a.contains("shall I go ahead")), "{ask:?}");
    assert_eq!(r.route("cli:local", "what?", t0()).await.unwrap(), Routed::PassThrough, "other text waits");
    assert!(matches!(r.route("cli:local", "yes", t0()).await.unwrap(), Routed::Run { choice: 1, .. }));
    r.store.offer(menu(3, true), t0()).unwrap();
    r.route("cli:local", "2", t0()).await.unwrap();
    let no = r.route("cli:local", "no", t0()).await.unwrap();
    assert!(matches!(&no, Routed::Answer(a) if a.contains("won't")), "{no:?}");
    assert_eq!(r.route("cli:local", "yes", t0()).await.unwrap(), Routed::PassThrough, "nothing left to confirm");
}

#[actix_rt::test]
async fn an_expired_menu_consumes_nothing_and_a_superseded_one_refuses_its_picks() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(&dir, None);
    let old = r.store.offer(menu(3, false), t0()).unwrap();
    let new = r.store.offer(menu(2, false), t0()).unwrap();
    let out = r.route("cli:local", &format!("/pick {} 2", old.id), t0()).await.unwrap();
    assert_eq!(out, Routed::Answer(format!("Menu {} was replaced by menu {}; pick from that one.", old.id, new.id)));
    let later = t0() + Duration::hours(5);
    assert_eq!(r.route("cli:local", "1", later).await.unwrap(), Routed::PassThrough);
    assert!(matches!(r.route("cli:local", &format!("/pick {} 1", new.id), later).await.unwrap(), Routed::Answer(_)));
}

#[actix_rt::test]
async fn free_text_goes_to_the_classifier_only_when_there_is_one_and_counts_above_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let none = router(&dir, None);
    none.store.offer(menu(3, false), t0()).unwrap();
    assert_eq!(none.route("cli:local", "the second one", t0()).await.unwrap(), Routed::PassThrough);
    let unsure = router(&dir, Some(Rc::new(Classifier(2, 0.5))));
    assert_eq!(unsure.route("cli:local", "the second one", t0()).await.unwrap(), Routed::PassThrough);
    let sure = router(&dir, Some(Rc::new(Classifier(2, 0.95))));
    assert!(matches!(sure.route("cli:local", "the second one", t0()).await.unwrap(), Routed::Run { choice: 1, .. }));
}
