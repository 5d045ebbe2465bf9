//! Telegram's sending limits, kept ahead of time rather than learned from 429s: about one
//! message a second in a chat (a short burst allowed), twenty a minute in a group. Each chat
//! has its own rate with a burst (a generic cell rate: every send books the next slot), so a
//! chat that waits never holds up another. Telegram's limit on a bot in all chats (thirty a
//! second) is not kept: a personal bot's few chats stay far below it, and a 429 is still
//! waited out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One limit: `burst` sends at once, then one every `every`.
#[derive(Debug, Clone, Copy)]
struct Rate {
    every: Duration,
    burst: u32,
}

/// In a one-to-one chat: three at once, then one a second.
const PRIVATE: Rate = Rate { every: Duration::from_secs(1), burst: 3 };
/// In a group (a chat id below zero): one every three seconds, twenty in any minute.
const GROUP: Rate = Rate { every: Duration::from_secs(3), burst: 1 };

/// Chats remembered; one quiet for longer than its burst needs is forgotten first.
const CHATS_KEPT: usize = 1_000;

/// When each chat is back to one send a slot.
#[derive(Debug, Default)]
pub struct Pacer {
    chats: HashMap<String, Instant>,
}

impl Pacer {
    /// Books a send to `chat` asked for at `now`; how long it waits before it goes.
    pub fn book(&mut self, chat: &str, now: Instant) -> Duration {
        self.forget_quiet_chats(now);
        let rate = if chat.starts_with('-') { GROUP } else { PRIVATE };
        let due = self.chats.get(chat).copied();
        let at = earliest(due, rate, now);
        self.chats.insert(chat.to_owned(), due.map_or(at, |d| d.max(at)) + rate.every);
        at - now
    }

    fn forget_quiet_chats(&mut self, now: Instant) {
        if self.chats.len() >= CHATS_KEPT {
            self.chats.retain(|_, due| *due > now);
        }
    }
}

/// The earliest a send may go: `due` is when the rate would be back to one send a slot;
/// up to `burst - 1` slots may be used ahead of it.
fn earliest(due: Option<Instant>, rate: Rate, now: Instant) -> Instant {
    let ahead = rate.every * (rate.burst - 1);
    match due {
        Some(due) if due > now + ahead => due - ahead,
        _ => now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(p: &mut Pacer, chat: &str, now: Instant, n: usize) -> Vec<u128> {
        (0..n).map(|_| p.book(chat, now).as_millis()).collect()
    }

    #[test]
    fn a_chat_gets_a_short_burst_then_one_a_second() {
        let (mut p, t0) = (Pacer::default(), Instant::now());
        assert_eq!(waits(&mut p, "42", t0, 5), [0, 0, 0, 1000, 2000]);
        // Quiet for long enough: a burst again.
        assert_eq!(waits(&mut p, "42", t0 + Duration::from_secs(60), 3), [0, 0, 0]);
    }

    #[test]
    fn a_group_gets_twenty_in_any_minute() {
        let (mut p, t0) = (Pacer::default(), Instant::now());
        let w = waits(&mut p, "-1001", t0, 21);
        assert_eq!(&w[..3], [0, 3000, 6000]);
        assert!(w[..20].iter().all(|&ms| ms < 60_000), "twenty within the minute: {w:?}");
        assert_eq!(w[20], 60_000, "the 21st a minute after the first");
    }

    #[test]
    fn a_chat_that_waits_holds_up_no_other() {
        let (mut p, t0) = (Pacer::default(), Instant::now());
        waits(&mut p, "-1001", t0, 10);
        waits(&mut p, "42", t0, 4);
        assert_eq!(p.book("7", t0), Duration::ZERO, "another chat goes at once");
        assert_eq!(p.book("-1002", t0), Duration::ZERO, "another group too");
    }
}
