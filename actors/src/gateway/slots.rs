//! The gateway's connection slots: at most `max_connections` open at once, and the slots kept
//! for requests. A connection is idle while no request of it is being served (before its first
//! complete head, or between two on a kept-alive connection). When a new connection finds every
//! slot taken, the oldest idle connection is closed to make room for it; only when every open
//! connection has a request being served is the new one closed at once. So clients that hold
//! idle connections, however many and however fast they reopen them, never keep a complete
//! request out.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use tokio::sync::oneshot;

/// The open connections, oldest first.
pub(super) struct Slots {
    max: usize,
    open: RefCell<Open>,
}

#[derive(Default)]
struct Open {
    next: u64,
    by_age: BTreeMap<u64, Connection>,
}

struct Connection {
    serving: usize,
    close: oneshot::Sender<()>,
}

/// One connection's slot, given back when it is dropped.
pub(super) struct Held {
    slots: Rc<Slots>,
    id: u64,
}

/// One request being served on a connection: the connection is not idle while it lives.
pub(super) struct Serving {
    slots: Rc<Slots>,
    id: u64,
}

/// Told to a connection closed to make room for a newer one.
pub(super) type Evicted = oneshot::Receiver<()>;

impl Slots {
    pub(super) fn new(max: usize) -> Rc<Slots> {
        Rc::new(Slots { max: max.max(1), open: RefCell::default() })
    }

    /// A slot for a new connection: a free one, else the oldest idle connection's (that one is
    /// told to close); `None` when every open connection has a request being served.
    pub(super) fn admit(self: &Rc<Self>) -> Option<(Held, Evicted)> {
        let mut open = self.open.borrow_mut();
        if open.by_age.len() >= self.max {
            let oldest_idle = open.by_age.iter().find(|(_, c)| c.serving == 0).map(|(id, _)| *id)?;
            if let Some(evicted) = open.by_age.remove(&oldest_idle) {
                let _ = evicted.close.send(());
            }
        }
        let id = open.next;
        open.next += 1;
        let (close, evicted) = oneshot::channel();
        open.by_age.insert(id, Connection { serving: 0, close });
        Some((Held { slots: self.clone(), id }, evicted))
    }
}

impl Held {
    /// Marks a request of this connection as being served until the value is dropped.
    pub(super) fn serving(&self) -> Serving {
        if let Some(c) = self.slots.open.borrow_mut().by_age.get_mut(&self.id) {
            c.serving += 1;
        }
        Serving { slots: self.slots.clone(), id: self.id }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.slots.open.borrow_mut().by_age.remove(&self.id);
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(c) = self.slots.open.borrow_mut().by_age.get_mut(&self.id) {
            c.serving = c.serving.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room_and_one_being_served_never_does() {
        let slots = Slots::new(3);
        let (busy, mut busy_evicted) = slots.admit().unwrap();
        let _request = busy.serving();
        let (_a, mut a_evicted) = slots.admit().unwrap();
        let (_b, mut b_evicted) = slots.admit().unwrap();
        let (_c, _) = slots.admit().expect("room made");
        assert!(a_evicted.try_recv().is_ok(), "the oldest idle one is told to close");
        assert!(busy_evicted.try_recv().is_err() && b_evicted.try_recv().is_err());
    }

    #[test]
    fn with_every_connection_being_served_a_new_one_is_refused_until_one_ends() {
        let slots = Slots::new(2);
        let (a, _) = slots.admit().unwrap();
        let (b, _) = slots.admit().unwrap();
        let (ra, _rb) = (a.serving(), b.serving());
        assert!(slots.admit().is_none());
        drop(ra);
        assert!(slots.admit().is_some(), "a served request makes its connection idle again");
    }
}
