//! Server-pushed events: what the supervisor shows its attached terminals (proactive
//! messages, ask_user questions for `cli`). Each subscriber has a bounded queue: a client that
//! stops reading loses events (counted, logged) and never slows the engine down.

use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Events waiting per subscriber before new ones are dropped for it.
pub const EVENT_QUEUE: usize = 64;

#[derive(Clone, Default)]
pub struct EventBus {
    subscribers: Arc<Mutex<Vec<mpsc::Sender<String>>>>,
}

impl EventBus {
    pub fn subscribe(&self, capacity: usize) -> mpsc::Receiver<String> {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        rx
    }

    /// Queues `text` for every live subscriber; returns how many got it. A full queue drops
    /// the event for that subscriber only; a gone one is forgotten.
    pub fn publish(&self, text: &str) -> usize {
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.retain(|s| !s.is_closed());
        let mut got = 0;
        for s in subs.iter() {
            match s.try_send(text.to_owned()) {
                Ok(()) => got += 1,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!("an attached client is not reading: an event was dropped for it")
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
        got
    }

    pub fn subscribers(&self) -> usize {
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.retain(|s| !s.is_closed());
        subs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_for_that_subscriber_only_and_a_gone_one_is_forgotten() {
        let bus = EventBus::default();
        let mut slow = bus.subscribe(2);
        let mut fast = bus.subscribe(8);
        let gone = bus.subscribe(8);
        drop(gone);
        for i in 0..3 {
            bus.publish(&format!("e{i}"));
            assert_eq!(fast.try_recv().unwrap(), format!("e{i}"));
        }
        assert_eq!(bus.subscribers(), 2);
        assert_eq!((slow.try_recv().unwrap(), slow.try_recv().unwrap()), ("e0".into(), "e1".into()));
        assert!(slow.try_recv().is_err(), "e2 was dropped for the slow one, not queued without bound");
    }
}
