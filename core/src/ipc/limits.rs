//! What one local client may hold of the supervisor. Every connection takes a slot: 128
//! ordinary ones, and 8 kept for the long-lived connections of an attached REPL (which
//! subscribes to events) and the gateway (which hosts outlets). While every slot is taken the
//! server accepts no connection: the newer ones wait in the socket's listen queue and are
//! served in turn, none closed unanswered. A connection admitted into a kept slot whose first
//! request neither subscribes nor hosts waits for an ordinary slot, then is served. Each
//! connection has at most 32 requests in flight: past that the server stops reading it, so a
//! client that pipelines requests and reads no answer only fills its own socket buffer. A peer
//! must say hello within 5 s, and an ordinary connection with nothing in flight is closed after
//! 60 s of silence; a long-lived one never is.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::Notify;

pub const MAX_CONNECTIONS: usize = 128;
pub const KEPT_FOR_LONG_LIVED: usize = 8;
pub const MAX_IN_FLIGHT: usize = 32;
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The slots in use.
#[derive(Debug, Default)]
pub struct Slots {
    ordinary: Cell<usize>,
    kept: Cell<usize>,
    /// Told when a slot is given back.
    freed: Notify,
}

/// One connection's slot, given back when the connection ends.
#[derive(Debug)]
pub struct Slot {
    slots: Rc<Slots>,
    kept: Cell<bool>,
}

impl Slots {
    /// A slot for a new connection, if any is free.
    pub fn admit(self: &Rc<Self>) -> Option<Slot> {
        let (counter, kept) = if self.ordinary.get() < MAX_CONNECTIONS {
            (&self.ordinary, false)
        } else if self.kept.get() < KEPT_FOR_LONG_LIVED {
            (&self.kept, true)
        } else {
            return None;
        };
        counter.set(counter.get() + 1);
        Some(Slot { slots: self.clone(), kept: Cell::new(kept) })
    }

    /// Returns once a slot of either kind is free.
    pub async fn room(&self) {
        self.freed_until(|s| s.ordinary.get() < MAX_CONNECTIONS || s.kept.get() < KEPT_FOR_LONG_LIVED).await
    }

    /// Returns once `free` holds, checked again each time a slot is given back.
    async fn freed_until(&self, free: impl Fn(&Self) -> bool) {
        loop {
            // Registered before the check, so a slot given back in between is not missed.
            let freed = self.freed.notified();
            if free(self) {
                return;
            }
            freed.await;
        }
    }
}

impl Slot {
    /// Admitted into a slot kept for long-lived connections.
    #[cfg(test)]
    pub fn kept(&self) -> bool {
        self.kept.get()
    }

    /// A connection in a kept slot that turned out ordinary: waits for an ordinary slot and
    /// moves into it, giving the kept one back.
    pub async fn become_ordinary(&self) {
        if !self.kept.get() {
            return;
        }
        let slots = &self.slots;
        slots.freed_until(|s| s.ordinary.get() < MAX_CONNECTIONS).await;
        slots.ordinary.set(slots.ordinary.get() + 1);
        slots.kept.set(slots.kept.get().saturating_sub(1));
        self.kept.set(false);
        slots.freed.notify_waiters();
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let counter = if self.kept.get() { &self.slots.kept } else { &self.slots.ordinary };
        counter.set(counter.get().saturating_sub(1));
        self.slots.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_ordinary_then_kept_then_none_and_come_back() {
        let slots = Rc::new(Slots::default());
        let ordinary: Vec<Slot> = (0..MAX_CONNECTIONS).map(|_| slots.admit().unwrap()).collect();
        assert!(ordinary.iter().all(|s| !s.kept()));
        let kept: Vec<Slot> = (0..KEPT_FOR_LONG_LIVED).map(|_| slots.admit().unwrap()).collect();
        assert!(kept.iter().all(Slot::kept));
        assert!(slots.admit().is_none(), "full");
        drop(ordinary);
        assert!(!slots.admit().unwrap().kept(), "an ordinary slot is free again");
    }

    #[actix_rt::test]
    async fn a_kept_slot_becomes_ordinary_once_one_is_free_and_the_kept_one_comes_back() {
        let slots = Rc::new(Slots::default());
        let mut ordinary: Vec<Slot> = (0..MAX_CONNECTIONS).map(|_| slots.admit().unwrap()).collect();
        let kept = slots.admit().unwrap();
        let waiting = kept.become_ordinary();
        futures_util::pin_mut!(waiting);
        assert!(futures_util::poll!(waiting.as_mut()).is_pending(), "no ordinary slot yet");
        ordinary.pop();
        waiting.await;
        assert!(!kept.kept());
        assert_eq!((slots.ordinary.get(), slots.kept.get()), (MAX_CONNECTIONS, 0));
    }
}
