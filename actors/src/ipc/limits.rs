//! What one local client may hold of the supervisor. Every connection takes a slot: 128
//! ordinary ones, and 8 kept for the long-lived connections of an attached REPL (which
//! subscribes to events) and the gateway (which hosts outlets). Past both, a connection is
//! closed at once. A connection admitted into a kept slot must subscribe or host as its
//! first request. Each connection has at most 32 requests in flight: past that the server
//! stops reading it, so a client that pipelines requests and reads no answer only fills its
//! own socket buffer. A peer must say hello within 5 s, and an ordinary connection with
//! nothing in flight is closed after 60 s of silence; a long-lived one never is.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

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
}

/// One connection's slot, given back when the connection ends.
#[derive(Debug)]
pub struct Slot {
    slots: Rc<Slots>,
    kept: bool,
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
        Some(Slot { slots: self.clone(), kept })
    }
}

impl Slot {
    /// Admitted into a slot kept for long-lived connections.
    pub fn kept(&self) -> bool {
        self.kept
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let counter = if self.kept { &self.slots.kept } else { &self.slots.ordinary };
        counter.set(counter.get().saturating_sub(1));
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
}
