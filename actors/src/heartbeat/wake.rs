//! Event-driven wake (spec §11): producers (a cron completion, a subagent completion, a
//! manual `raven wake`) call `request_wake_now`, and the heartbeat loop's sleep ends early,
//! instead of the news waiting for the next regular tick.
//!
//! - Requests coalesce: however many arrive before the loop takes them, they make ONE tick.
//! - The rate guard: a wake fires no sooner than `min_gap` after the previous tick (whatever
//!   fired that one). A request inside the window is kept and fires once at
//!   `last_fire + min_gap`; it is never dropped.
//! - While user turns are in flight, a due wake is parked (the user comes first) and fires
//!   from the spine's turn-complete callback once the last user turn is done.
//!
//! [`WakeScheduler`] is the rule, with time passed in (no clock reads, no sleeps), so it is
//! tested on explicit instants. [`WakeHandle`] is the cheap clone producers and the loop
//! share: the scheduler plus the `Notify` that ends the loop's sleep.

use crate::clock::SharedClock;
use crate::spine::Scheduler;
use chrono::{DateTime, Duration, Utc};
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use tokio::sync::Notify;

#[derive(Debug, Clone)]
pub struct WakeScheduler {
    min_gap: Duration,
    /// The reasons of the requests not yet served, oldest first, without repeats.
    pending: Vec<String>,
    /// When the oldest pending request came in.
    requested_at: Option<DateTime<Utc>>,
    /// A due wake held back while user turns are in flight.
    parked: bool,
    /// When the last heartbeat tick started.
    last_fire: Option<DateTime<Utc>>,
}

impl WakeScheduler {
    pub fn new(min_gap: Duration) -> Self {
        WakeScheduler { min_gap, pending: Vec::new(), requested_at: None, parked: false, last_fire: None }
    }

    /// Asks for an early tick. Returns false when it joined requests already waiting (it is
    /// served by their tick).
    pub fn request_wake_now(&mut self, reason: impl Into<String>, now: DateTime<Utc>) -> bool {
        let reason = reason.into();
        let fresh = self.pending.is_empty();
        if fresh {
            self.requested_at = Some(now);
        }
        if !self.pending.contains(&reason) {
            self.pending.push(reason);
        }
        fresh
    }

    /// When the pending wake may fire, parked or not.
    fn due_at(&self) -> Option<DateTime<Utc>> {
        let requested = self.requested_at.filter(|_| !self.pending.is_empty())?;
        Some(self.last_fire.map_or(requested, |last| requested.max(last + self.min_gap)))
    }

    /// When the loop should wake for the pending request: `None` with nothing pending, or
    /// while it is parked (the turn-complete callback wakes the loop then).
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.due_at().filter(|_| !self.parked)
    }

    /// The pending reasons when a wake is due at `now` and the user is not busy: the caller
    /// runs ONE tick for all of them, and the guard's window starts at `now`. A due wake
    /// while `user_busy` is parked instead (`None`).
    pub fn take_due(&mut self, now: DateTime<Utc>, user_busy: bool) -> Option<Vec<String>> {
        if self.due_at()? > now {
            return None;
        }
        if user_busy {
            self.parked = true;
            return None;
        }
        let reasons = std::mem::take(&mut self.pending);
        self.fired(now);
        Some(reasons)
    }

    /// A heartbeat tick started at `now`, whatever fired it: the requests made so far are
    /// served by it (it reads HEARTBEAT.md afresh), and the guard's window starts now.
    /// A request made later, even during this tick, waits for the next one.
    pub fn fired(&mut self, now: DateTime<Utc>) {
        self.pending.clear();
        self.requested_at = None;
        self.parked = false;
        self.last_fire = Some(self.last_fire.map_or(now, |l| l.max(now)));
    }

    /// The last user turn completed: a parked wake may fire. True when one is due at `now`.
    pub fn on_user_turns_idle(&mut self, now: DateTime<Utc>) -> bool {
        if !std::mem::take(&mut self.parked) {
            return false;
        }
        self.due_at().is_some_and(|d| d <= now)
    }

    #[cfg(test)]
    pub fn is_parked(&self) -> bool {
        self.parked
    }

    #[cfg(test)]
    pub fn pending(&self) -> &[String] {
        &self.pending
    }

    #[cfg(test)]
    pub fn last_fire(&self) -> Option<DateTime<Utc>> {
        self.last_fire
    }
}

struct Shared {
    scheduler: RefCell<WakeScheduler>,
    /// Ends the loop's sleep. `notify_one` keeps a permit when the loop is not waiting (it
    /// is mid-tick), so a request is never missed.
    notify: Notify,
    /// Whether user turns are in flight (none: never busy).
    busy: RefCell<Option<Box<dyn Fn() -> bool>>>,
    /// The loop's next regular tick, for `NextHeartbeat`.
    next_tick: Cell<Option<DateTime<Utc>>>,
}

/// The shared wake: clone it into every producer and the heartbeat loop (same thread).
#[derive(Clone)]
pub struct WakeHandle {
    shared: Rc<Shared>,
}

impl WakeHandle {
    pub fn new(min_gap: Duration) -> Self {
        WakeHandle {
            shared: Rc::new(Shared {
                scheduler: RefCell::new(WakeScheduler::new(min_gap)),
                notify: Notify::new(),
                busy: RefCell::new(None),
                next_tick: Cell::new(None),
            }),
        }
    }

    pub fn from_config(cfg: &super::HeartbeatConfig) -> Self {
        WakeHandle::new(Duration::seconds(i64::from(u32::try_from(cfg.wake_min_gap_s).unwrap_or(u32::MAX))))
    }

    /// A producer's request: the loop's sleep ends now, and it decides (guard, parking).
    pub fn request_wake_now(&self, reason: impl Into<String>, now: DateTime<Utc>) {
        self.shared.scheduler.borrow_mut().request_wake_now(reason, now);
        self.shared.notify.notify_one();
    }

    /// Makes the loop look at the clock again without a request (a manual clock moved, the
    /// machine resumed).
    #[cfg(test)]
    pub fn recheck(&self) {
        self.shared.notify.notify_one();
    }

    /// Follows the spine's user turns: the loop's busy check reads the Scheduler's count,
    /// and a turn completion that leaves none in flight releases a parked wake.
    /// Once per handle (`HeartbeatService::new` does it).
    pub fn follow_user_turns(&self, scheduler: &Scheduler, clock: SharedClock) {
        let probe = scheduler.clone();
        *self.shared.busy.borrow_mut() = Some(Box::new(move || probe.user_turns_in_flight() > 0));
        // Weak: the Scheduler outlives nothing through this callback (no Rc cycle).
        let weak: Weak<Shared> = Rc::downgrade(&self.shared);
        scheduler.on_turn_complete(move |_, _| {
            if let Some(shared) = weak.upgrade() {
                let wake = WakeHandle { shared };
                if !wake.user_busy() {
                    wake.on_user_turns_idle(clock.now());
                }
            }
        });
    }

    pub fn user_busy(&self) -> bool {
        self.shared.busy.borrow().as_ref().is_some_and(|f| f())
    }

    /// The turn-complete callback: a parked wake fires now.
    pub fn on_user_turns_idle(&self, now: DateTime<Utc>) {
        if self.shared.scheduler.borrow_mut().on_user_turns_idle(now) {
            self.shared.notify.notify_one();
        }
    }

    pub fn take_due(&self, now: DateTime<Utc>, user_busy: bool) -> Option<Vec<String>> {
        self.shared.scheduler.borrow_mut().take_due(now, user_busy)
    }

    pub fn fired(&self, now: DateTime<Utc>) {
        self.shared.scheduler.borrow_mut().fired(now);
    }

    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.shared.scheduler.borrow().next_due()
    }

    /// A copy of the rule's state (status, tests).
    #[cfg(test)]
    pub fn snapshot(&self) -> WakeScheduler {
        self.shared.scheduler.borrow().clone()
    }

    /// Ends when a request (or a released parked wake, or `recheck`) arrives.
    pub async fn woken(&self) {
        self.shared.notify.notified().await
    }

    /// The heartbeat loop publishes its next regular tick here (`None`: no loop runs).
    pub fn set_next_tick(&self, at: Option<DateTime<Utc>>) {
        self.shared.next_tick.set(at);
    }

    /// When the loop will tick next: its regular tick, or a pending wake's due time when
    /// sooner. `None` when no loop runs.
    pub fn next_heartbeat(&self) -> Option<DateTime<Utc>> {
        let tick = self.shared.next_tick.get()?;
        Some(self.next_due().map_or(tick, |d| d.min(tick)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap()
    }

    fn s(n: i64) -> Duration {
        Duration::seconds(n)
    }

    /// A scheduler whose guard window (60 s) opened at `t0` with a first fire.
    fn after_a_fire() -> WakeScheduler {
        let mut w = WakeScheduler::new(s(60));
        w.request_wake_now("first", t0());
        assert_eq!(w.take_due(t0(), false), Some(vec!["first".to_owned()]));
        w
    }

    #[test]
    fn a_first_request_fires_at_once() {
        let mut w = WakeScheduler::new(s(60));
        assert_eq!(w.next_due(), None);
        assert!(w.request_wake_now("cron:backup done", t0()));
        assert_eq!(w.next_due(), Some(t0()));
        assert_eq!(w.take_due(t0(), false), Some(vec!["cron:backup done".to_owned()]));
        assert_eq!(w.next_due(), None, "served");
        assert_eq!(w.take_due(t0() + s(3600), false), None, "nothing left to fire");
    }

    #[test]
    fn three_requests_inside_the_window_make_exactly_one_tick() {
        let mut w = after_a_fire();
        assert!(w.request_wake_now("cron:a", t0() + s(10)));
        assert!(!w.request_wake_now("subagent:b", t0() + s(20)), "coalesced");
        assert!(!w.request_wake_now("cron:a", t0() + s(30)), "coalesced");
        let mut fired = Vec::new();
        for sec in (10..=300).step_by(5) {
            if let Some(r) = w.take_due(t0() + s(sec), false) {
                fired.push((sec, r));
            }
        }
        assert_eq!(fired, vec![(60, vec!["cron:a".to_owned(), "subagent:b".to_owned()])]);
    }

    #[test]
    fn a_request_inside_the_window_is_kept_and_fires_at_last_fire_plus_gap() {
        let mut w = after_a_fire();
        w.request_wake_now("manual", t0() + s(5));
        assert_eq!(w.next_due(), Some(t0() + s(60)), "the loop sleeps until the window ends");
        assert_eq!(w.take_due(t0() + s(59), false), None);
        assert_eq!(w.take_due(t0() + s(60), false), Some(vec!["manual".to_owned()]));
    }

    #[test]
    fn a_request_after_the_window_fires_a_second_tick_at_once() {
        let mut w = after_a_fire();
        w.request_wake_now("late", t0() + s(61));
        assert_eq!(w.next_due(), Some(t0() + s(61)));
        assert_eq!(w.take_due(t0() + s(61), false), Some(vec!["late".to_owned()]));
        assert_eq!(w.last_fire(), Some(t0() + s(61)));
    }

    #[test]
    fn an_interval_tick_serves_the_pending_wake_and_opens_the_window() {
        let mut w = WakeScheduler::new(s(60));
        w.request_wake_now("cron:a", t0());
        w.fired(t0());
        assert_eq!(w.next_due(), None, "the regular tick read HEARTBEAT.md for it");
        w.request_wake_now("cron:b", t0() + s(1));
        assert_eq!(w.next_due(), Some(t0() + s(60)), "the guard spaces it from the interval tick");
    }

    #[test]
    fn a_request_made_during_a_tick_is_not_lost() {
        let mut w = WakeScheduler::new(s(60));
        w.request_wake_now("a", t0());
        assert!(w.take_due(t0(), false).is_some());
        // The tick is running (it awaits the LLM) when a subagent finishes.
        w.request_wake_now("subagent done", t0());
        assert_eq!(w.next_due(), Some(t0() + s(60)));
        assert_eq!(w.take_due(t0() + s(60), false), Some(vec!["subagent done".to_owned()]));
    }

    #[test]
    fn a_due_wake_while_user_turns_are_busy_is_parked_and_fires_once_when_idle() {
        let mut w = WakeScheduler::new(s(60));
        w.request_wake_now("cron:a", t0());
        assert_eq!(w.take_due(t0(), true), None, "parked");
        assert!(w.is_parked());
        assert_eq!(w.next_due(), None, "the loop does not spin on a parked wake");
        assert_eq!(w.take_due(t0() + s(30), true), None);
        w.request_wake_now("cron:b", t0() + s(40));
        assert!(w.is_parked(), "a new request while parked joins it");
        assert!(w.on_user_turns_idle(t0() + s(90)), "the turn-complete callback releases it");
        assert_eq!(w.take_due(t0() + s(90), false), Some(vec!["cron:a".to_owned(), "cron:b".to_owned()]));
        assert!(!w.on_user_turns_idle(t0() + s(91)), "once");
        assert_eq!(w.take_due(t0() + s(200), false), None);
    }

    #[test]
    fn idle_without_a_parked_wake_fires_nothing() {
        let mut w = after_a_fire();
        assert!(!w.on_user_turns_idle(t0() + s(1)));
        w.request_wake_now("early", t0() + s(2));
        assert!(!w.on_user_turns_idle(t0() + s(3)), "not parked: the guard still holds it");
        assert_eq!(w.next_due(), Some(t0() + s(60)));
    }

    #[actix_rt::test]
    async fn a_request_ends_the_wait_even_when_made_before_it() {
        let h = WakeHandle::new(s(60));
        h.request_wake_now("manual", t0());
        let woke = tokio::time::timeout(std::time::Duration::from_millis(100), h.woken()).await;
        assert!(woke.is_ok(), "the permit was kept for the loop");
        assert_eq!(h.snapshot().pending(), ["manual".to_owned()]);
    }
}
