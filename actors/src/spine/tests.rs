use super::*;
use chrono::Utc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};

fn turn(conv: &str, origin: Origin, content: &str, bp: BusyPolicy) -> TurnRequest {
    TurnRequest::new(format!("r-{content}"), origin, conv, "cli", conv, content, bp, Utc::now())
}

fn user(conv: &str, content: &str) -> TurnRequest {
    turn(conv, Origin::User, content, BusyPolicy::Append)
}

/// Logs starts and ends; a turn whose content starts with "wait" blocks until `go` is
/// notified; "meet:X" waits for turn "meet:Y" of another conversation to have started.
#[derive(Clone, Default)]
struct Probe {
    log: Rc<RefCell<Vec<String>>>,
    go: Rc<Notify>,
    started: Rc<Notify>,
}

impl TurnHandler for Probe {
    fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
        let p = self.clone();
        Box::pin(async move {
            p.log.borrow_mut().push(format!("start {}", req.content));
            p.started.notify_waiters();
            if req.content.starts_with("wait") {
                p.go.notified().await;
            } else {
                actix_rt::time::sleep(Duration::from_millis(1)).await;
            }
            let injected = inbox.drain();
            p.log.borrow_mut().push(format!("end {}", req.content));
            TurnOutcome::Replied(format!(
                "{}{}",
                req.content,
                injected.iter().map(|i| format!(" +{i}")).collect::<String>()
            ))
        })
    }
}

fn scheduler(p: &Probe, user_pool: usize) -> (Scheduler, mpsc::UnboundedReceiver<(TurnRequest, TurnOutcome)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Scheduler::new(Rc::new(p.clone()), OriginPools::new(user_pool, 2)).with_outcomes(tx), rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<(TurnRequest, TurnOutcome)>) -> (TurnRequest, TurnOutcome) {
    tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("a turn finished in time").unwrap()
}

#[actix_rt::test]
async fn one_conversation_runs_its_turns_strictly_in_order() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    for i in 0..5 {
        assert_eq!(s.submit(user("a", &format!("t{i}"))), Routed::Appended);
    }
    for _ in 0..5 {
        next(&mut rx).await;
    }
    let want: Vec<String> = (0..5).flat_map(|i| [format!("start t{i}"), format!("end t{i}")]).collect();
    assert_eq!(*p.log.borrow(), want);
}

#[actix_rt::test]
async fn two_conversations_run_concurrently() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    s.submit(user("a", "wait-a"));
    // "b" runs and finishes while "a" is still blocked: the lanes are independent.
    s.submit(user("b", "quick-b"));
    let (req, _) = next(&mut rx).await;
    assert_eq!(req.content, "quick-b");
    assert!(s.has_inflight("a"));
    p.go.notify_waiters();
    assert_eq!(next(&mut rx).await.0.content, "wait-a");
    assert!(!s.has_inflight("a"));
}

#[actix_rt::test]
async fn a_user_inject_reaches_the_running_turn() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    s.submit(user("a", "wait"));
    p.started.notified().await;
    assert!(s.has_inflight("a"));
    assert_eq!(s.submit(turn("a", Origin::User, "also this", BusyPolicy::Inject)), Routed::Injected);
    p.go.notify_waiters();
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("wait +also this".into()));
}

#[actix_rt::test]
async fn an_undrained_inject_becomes_the_next_turn() {
    // This handler drains its inbox only at the start, like a turn past its last iteration.
    #[derive(Clone, Default)]
    struct Early(Probe);
    impl TurnHandler for Early {
        fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
            let p = self.0.clone();
            Box::pin(async move {
                let early = inbox.drain();
                p.started.notify_waiters();
                if req.content == "wait" {
                    p.go.notified().await;
                }
                TurnOutcome::Replied(format!("{} {early:?}", req.content))
            })
        }
    }
    let e = Early::default();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let s = Scheduler::new(Rc::new(e.clone()), OriginPools::new(4, 2)).with_outcomes(tx);
    s.submit(user("a", "wait"));
    e.0.started.notified().await;
    s.submit(turn("a", Origin::User, "late words", BusyPolicy::Inject));
    e.0.go.notify_waiters();
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("wait []".into()));
    let (req, out) = next(&mut rx).await;
    assert_eq!(req.origin, Origin::User);
    assert_eq!(out, TurnOutcome::Replied("late words []".into()), "not lost: a fresh turn");
}

#[actix_rt::test]
async fn a_sentinel_inject_is_demoted_to_append() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    s.submit(user("a", "wait"));
    p.started.notified().await;
    assert_eq!(s.submit(turn("a", Origin::Sentinel, "proactive", BusyPolicy::Inject)), Routed::Appended);
    assert_eq!(s.submit(turn("a", Origin::Cron, "cron", BusyPolicy::Interrupt)), Routed::Appended);
    assert_eq!(s.queued("a"), 2);
    p.go.notify_waiters();
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("wait".into()), "nothing was injected");
    assert_eq!(next(&mut rx).await.0.content, "proactive");
    assert_eq!(next(&mut rx).await.0.content, "cron");
}

#[actix_rt::test]
async fn a_user_interrupt_cancels_the_running_turn_cleanly() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    s.submit(user("a", "wait"));
    p.started.notified().await;
    assert_eq!(s.submit(turn("a", Origin::User, "stop that", BusyPolicy::Interrupt)), Routed::Interrupted);
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Interrupted);
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("stop that".into()));
}

#[actix_rt::test]
async fn a_full_user_pool_holds_the_next_turn_until_a_slot_frees() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    for c in ["c1", "c2", "c3", "c4"] {
        s.submit(user(c, "wait"));
    }
    s.submit(user("c5", "fifth"));
    // Give the fifth every chance to start: it must not.
    for _ in 0..20 {
        actix_rt::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(!p.log.borrow().contains(&"start fifth".to_owned()));
    assert!(!s.has_inflight("c5"));
    // A proactive turn still runs: its own pool.
    s.submit(turn("c6", Origin::Sentinel, "sentinel", BusyPolicy::Append));
    assert_eq!(next(&mut rx).await.0.content, "sentinel");
    p.go.notify_waiters();
    let mut done: Vec<String> = Vec::new();
    for _ in 0..5 {
        done.push(next(&mut rx).await.0.conversation_id);
    }
    assert!(done.contains(&"c5".to_owned()), "the fifth waited and then ran: {done:?}");
}

#[actix_rt::test]
async fn a_panicking_turn_fails_alone_and_the_lane_serves_the_next() {
    struct Boom;
    impl TurnHandler for Boom {
        fn run(&self, req: TurnRequest, _: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
            Box::pin(async move {
                if req.content == "boom" {
                    panic!("turn bug");
                }
                TurnOutcome::Replied(req.content)
            })
        }
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let s = Scheduler::new(Rc::new(Boom), OriginPools::new(4, 2)).with_outcomes(tx);
    s.submit(user("a", "boom"));
    s.submit(user("a", "after"));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Failed("the turn panicked".into()));
    assert_eq!(next(&mut rx).await.1, TurnOutcome::Replied("after".into()));
}

#[actix_rt::test]
async fn the_spine_is_metered_turns_queued_handled_and_failed() {
    struct Boom;
    impl TurnHandler for Boom {
        fn run(&self, req: TurnRequest, _: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
            Box::pin(async move {
                match req.content.as_str() {
                    "fail" => TurnOutcome::Failed("no model".into()),
                    c => TurnOutcome::Replied(c.to_owned()),
                }
            })
        }
    }
    let metrics = crate::supervise::Metrics::default();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let s = Scheduler::new(Rc::new(Boom), OriginPools::new(4, 2)).with_outcomes(tx).metered(&metrics, "Spine");
    for c in ["one", "fail", "two"] {
        s.submit(user("a", c));
    }
    let row = || metrics.snapshot().into_iter().find(|m| m.name == "Spine").unwrap();
    assert_eq!((row().received, row().mailbox_depth), (3, 3), "three queued before any runs");
    for _ in 0..3 {
        next(&mut rx).await;
    }
    let r = row();
    assert_eq!((r.received, r.handled, r.failed, r.mailbox_depth), (3, 2, 1, 0));
}

#[actix_rt::test]
async fn user_turns_in_flight_counts_queued_and_running_user_turns_only() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    assert_eq!(s.user_turns_in_flight(), 0);
    s.submit(user("a", "wait"));
    s.submit(user("a", "second"));
    s.submit(turn("b", Origin::Heartbeat, "proactive", BusyPolicy::Append));
    assert_eq!(s.user_turns_in_flight(), 2, "running and queued user turns; not the heartbeat's");
    assert_eq!(next(&mut rx).await.0.content, "proactive");
    assert!(s.has_inflight("a"));
    // An inject rides the running turn: not one more.
    assert_eq!(s.submit(turn("a", Origin::User, "more", BusyPolicy::Inject)), Routed::Injected);
    assert_eq!(s.clone().user_turns_in_flight(), 2, "clones share the count");
    p.go.notify_waiters();
    next(&mut rx).await;
    assert_eq!(s.user_turns_in_flight(), 1);
    next(&mut rx).await;
    assert_eq!(s.user_turns_in_flight(), 0);
}

#[actix_rt::test]
async fn turn_complete_callbacks_run_after_each_turn_with_the_count_already_down() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    let seen: Rc<RefCell<Vec<(String, usize)>>> = Default::default();
    let (log, probe) = (seen.clone(), s.clone());
    s.on_turn_complete(move |req, _| log.borrow_mut().push((req.content.clone(), probe.user_turns_in_flight())));
    s.submit(user("a", "one"));
    s.submit(user("a", "two"));
    for _ in 0..2 {
        next(&mut rx).await;
    }
    s.submit(turn("c", Origin::Cron, "three", BusyPolicy::Append));
    next(&mut rx).await;
    let want = vec![("one".to_owned(), 1), ("two".to_owned(), 0), ("three".to_owned(), 0)];
    assert_eq!(*seen.borrow(), want, "every origin is reported, after its own turn left the count");
}

#[actix_rt::test]
async fn an_idle_lane_is_retired_and_its_conversation_still_takes_turns() {
    let p = Probe::default();
    let (s, mut rx) = scheduler(&p, 4);
    // Conversations that come and go (subagents, cron jobs) leave no lane behind.
    for i in 0..100 {
        s.submit(user(&format!("sub:{i}"), "once"));
    }
    for _ in 0..100 {
        next(&mut rx).await;
    }
    actix_rt::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(s.lanes(), 0, "every idle lane was retired");
    s.submit(user("sub:7", "again"));
    assert_eq!(next(&mut rx).await.0.content, "again", "a retired conversation gets a new lane");
    // A lane with queued turns is not retired between them.
    for c in ["one", "two", "three"] {
        s.submit(user("busy", c));
    }
    let order: Vec<String> =
        [next(&mut rx).await, next(&mut rx).await, next(&mut rx).await].into_iter().map(|(r, _)| r.content).collect();
    assert_eq!(order, ["one", "two", "three"]);
}
