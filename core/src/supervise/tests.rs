use super::*;
use std::time::Duration;

/// A counter that panics on demand and reloads a "persisted" value on restart.
struct Flaky {
    count: u64,
    persisted: Arc<std::sync::atomic::AtomicU64>,
    reloads: u64,
}

impl Service for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }
    fn restarting(&mut self) {
        self.reloads += 1;
        self.count = self.persisted.load(std::sync::atomic::Ordering::SeqCst);
    }
}

struct Bump {
    panic: bool,
}
impl Request for Bump {
    type Reply = (u64, u64);
}

impl Serve<Bump> for Flaky {
    fn serve(&mut self, msg: Bump) -> (u64, u64) {
        self.count += 1;
        if msg.panic {
            panic!("injected failure");
        }
        self.persisted.store(self.count, std::sync::atomic::Ordering::SeqCst);
        (self.count, self.reloads)
    }
}

fn fast_policy(max_restarts: u32) -> RestartPolicy {
    RestartPolicy {
        backoff_initial: Duration::from_millis(1),
        backoff_max: Duration::from_millis(4),
        healthy_run: None,
        max_restarts,
        window: Duration::from_secs(60),
        panic_at: None,
        panic_onwards: false,
        cooldown: Duration::from_secs(60),
    }
}

fn flaky() -> Flaky {
    Flaky { count: 0, persisted: Default::default(), reloads: 0 }
}

#[actix_rt::test]
async fn a_handler_panic_restarts_the_actor_and_the_next_message_is_served() {
    let metrics = Metrics::default();
    let h = start(flaky(), &metrics, fast_policy(5));
    assert_eq!(h.call(Bump { panic: false }).await.unwrap(), (1, 0));
    let err = h.call(Bump { panic: true }).await.unwrap_err();
    assert!(matches!(err, ActorError::Panicked { actor: "flaky", .. }), "{err:?}");
    // The half-done increment of the panicking handler is discarded by the reload.
    assert_eq!(h.call(Bump { panic: false }).await.unwrap(), (2, 1));
    let snap = &metrics.snapshot()[0];
    assert_eq!(snap.restarts, 1);
    assert_eq!(snap.received, 3);
    assert_eq!(snap.handled, 2);
    assert_eq!(snap.failed, 1);
    assert_eq!(snap.mailbox_depth, 0);
    assert!(!snap.crash_loop);
}

#[actix_rt::test]
async fn messages_queued_behind_a_panic_are_not_lost() {
    let metrics = Metrics::default();
    let h = start(flaky(), &metrics, fast_policy(5));
    let a = h.call(Bump { panic: true });
    let b = h.call(Bump { panic: false });
    let c = h.call(Bump { panic: false });
    let (a, b, c) = futures_util::future::join3(a, b, c).await;
    assert!(a.is_err());
    assert_eq!(b.unwrap().0, 1);
    assert_eq!(c.unwrap().0, 2);
}

#[actix_rt::test]
async fn a_crash_loop_beyond_the_limit_is_reported_not_hidden() {
    let metrics = Metrics::default();
    let h = start(flaky(), &metrics, fast_policy(2));
    for _ in 0..3 {
        assert!(matches!(h.call(Bump { panic: true }).await, Err(ActorError::Panicked { .. })));
    }
    let err = h.call(Bump { panic: false }).await.unwrap_err();
    assert_eq!(err, ActorError::CrashLoop { actor: "flaky" });
    let snap = &metrics.snapshot()[0];
    assert_eq!(snap.restarts, 3);
    assert!(snap.crash_loop);
    assert!(render_table(&metrics.snapshot()).contains("CRASH-LOOP"));
    assert!(render_prometheus(&metrics, None).contains("raven_actor_crash_loop{actor=\"flaky\"} 1"));
}

struct Slow {
    calls: std::rc::Rc<std::cell::Cell<u32>>,
}

impl Service for Slow {
    fn name(&self) -> &'static str {
        "slow"
    }
}

struct Wait {
    panic: bool,
    ms: u64,
}
impl Request for Wait {
    type Reply = u32;
}

impl ServeAsync<Wait> for Slow {
    fn serve_async(&mut self, msg: Wait) -> LocalBoxFuture<'static, u32> {
        let calls = self.calls.clone();
        Box::pin(async move {
            actix_rt::time::sleep(Duration::from_millis(msg.ms)).await;
            if msg.panic {
                panic!("async failure");
            }
            calls.set(calls.get() + 1);
            calls.get()
        })
    }
}

#[actix_rt::test]
async fn a_panic_inside_an_awaiting_handler_restarts_the_actor_too() {
    let metrics = Metrics::default();
    let h = start(Slow { calls: Default::default() }, &metrics, fast_policy(5));
    assert_eq!(h.call_async(Wait { panic: false, ms: 1 }).await.unwrap(), 1);
    let err = h.call_async(Wait { panic: true, ms: 1 }).await.unwrap_err();
    assert!(matches!(err, ActorError::Panicked { actor: "slow", .. }), "{err:?}");
    assert_eq!(h.call_async(Wait { panic: false, ms: 1 }).await.unwrap(), 2);
    let snap = &metrics.snapshot()[0];
    assert_eq!((snap.restarts, snap.handled, snap.failed, snap.mailbox_depth), (1, 2, 1, 0));
}

#[actix_rt::test]
async fn the_fault_switch_panics_at_the_nth_message_once() {
    assert_eq!(parse_fault("Planner:3,flaky:2", "flaky"), Some((2, false)));
    assert_eq!(parse_fault("Planner:3", "flaky"), None);
    assert_eq!(parse_fault("flaky:4+", "flaky"), Some((4, true)));
    let metrics = Metrics::default();
    let policy = RestartPolicy { panic_at: Some(2), ..fast_policy(5) };
    let h = start(flaky(), &metrics, policy);
    assert!(h.call(Bump { panic: false }).await.is_ok());
    assert!(matches!(h.call(Bump { panic: false }).await, Err(ActorError::Panicked { .. })));
    assert!(h.call(Bump { panic: false }).await.is_ok());
    assert_eq!(metrics.snapshot()[0].restarts, 1);
}

#[actix_rt::test]
async fn one_panic_fails_only_its_own_message_and_calls_in_flight_complete() {
    let metrics = Metrics::default();
    let h = start(Slow { calls: Default::default() }, &metrics, fast_policy(5));
    let slow = [h.call_async(Wait { panic: false, ms: 20 }), h.call_async(Wait { panic: false, ms: 20 })];
    let (done, failed) =
        futures_util::future::join(futures_util::future::join_all(slow), h.call_async(Wait { panic: true, ms: 1 }))
            .await;
    assert!(matches!(failed, Err(ActorError::Panicked { .. })), "{failed:?}");
    let mut done: Vec<u32> = done.into_iter().map(|r| r.expect("a call in flight survives the panic")).collect();
    done.sort();
    assert_eq!(done, [1, 2]);
    assert_eq!(h.call(Bump2).await.unwrap(), 2, "served again");
    assert_eq!(metrics.snapshot()[0].restarts, 1);
}

struct Bump2;
impl Request for Bump2 {
    type Reply = u32;
}
impl Serve<Bump2> for Slow {
    fn serve(&mut self, _: Bump2) -> u32 {
        self.calls.get()
    }
}

#[actix_rt::test]
async fn a_crash_loop_reopens_after_its_cooldown() {
    let metrics = Metrics::default();
    let policy = RestartPolicy { cooldown: Duration::from_millis(30), ..fast_policy(2) };
    let h = start(flaky(), &metrics, policy);
    for _ in 0..3 {
        assert!(matches!(h.call(Bump { panic: true }).await, Err(ActorError::Panicked { .. })));
    }
    assert_eq!(h.call(Bump { panic: false }).await.unwrap_err(), ActorError::CrashLoop { actor: "flaky" });
    assert!(metrics.snapshot()[0].crash_loop);
    actix_rt::time::sleep(Duration::from_millis(40)).await;
    assert!(h.call(Bump { panic: false }).await.is_ok(), "served again after the cool-down");
    assert!(!metrics.snapshot()[0].crash_loop);
}
