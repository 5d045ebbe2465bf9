//! The proactive messages the hub delivered lately, by nudge and the target they reached. A
//! message for an unwatched terminal goes to the user's chat channel instead; when the same
//! nudge also named that chat (a cron job broadcasting to the terminal and the chat), the
//! chat gets it once.

use raven_proto::OutboundText;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// Pairs remembered (the oldest are forgotten first).
const KEPT: usize = 2_000;

#[derive(Debug, Clone, Default)]
pub struct SentLately(Arc<Mutex<Pairs>>);

#[derive(Debug, Default)]
struct Pairs {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl SentLately {
    /// Whether the nudge of `text` already reached `text`'s target.
    pub fn reached(&self, text: &OutboundText) -> bool {
        key(text).is_some_and(|k| self.pairs().set.contains(&k))
    }

    /// The nudge of `text` reached `text`'s target.
    pub fn note(&self, text: &OutboundText) {
        let Some(k) = key(text) else { return };
        let mut p = self.pairs();
        if p.set.insert(k.clone()) {
            p.order.push_back(k);
            if p.order.len() > KEPT {
                let old = p.order.pop_front().unwrap_or_default();
                p.set.remove(&old);
            }
        }
    }

    fn pairs(&self) -> std::sync::MutexGuard<'_, Pairs> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `<nudge id>@<channel>:<chat>`, for a message that belongs to a nudge.
fn key(text: &OutboundText) -> Option<String> {
    let nudge = text.extras.get(raven_proto::NUDGE_ID)?;
    Some(format!("{nudge}@{}", text.target()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(nudge: &str, channel: &str, chat: &str) -> OutboundText {
        let mut t = OutboundText::proactive(format!("{nudge}@x"), channel, chat, "hi");
        t.extras.insert(raven_proto::NUDGE_ID.into(), nudge.into());
        t
    }

    #[test]
    fn a_nudge_reaches_each_target_once_and_other_nudges_are_apart() {
        let sent = SentLately::default();
        assert!(!sent.reached(&copy("n1", "telegram", "42")));
        sent.note(&copy("n1", "telegram", "42"));
        assert!(sent.reached(&copy("n1", "telegram", "42")));
        assert!(!sent.reached(&copy("n1", "telegram", "7")), "another chat");
        assert!(!sent.reached(&copy("n2", "telegram", "42")), "another nudge");
        let plain = OutboundText::proactive("r1", "telegram", "42", "a reply");
        sent.note(&plain);
        assert!(!sent.reached(&plain), "a message of no nudge is not remembered");
    }
}
