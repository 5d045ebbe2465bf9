//! Telegram's sending limits, kept ahead of time rather than learned from 429s: about one
//! message a second in a chat (short bursts allowed), twenty a minute in a group, thirty a
//! second in all. Each is a rate with a burst (a generic cell rate: every send books the next
//! slot), and a send waits for the later of its chat's slot and the bot's.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One limit: `burst` sends at once, then one every `every`.
#[derive(Debug, Clone, Copy)]
struct Rate {
    every: Duration,
    burst: u32,
}

/// In a one-to-one chat: one a second, three at once.
const PRIVATE: Rate = Rate { every: Duration::from_secs(1), burst: 3 };
/// In a group (a chat id below zero): twenty a minute, three at once.
const GROUP: Rate = Rate { every: Duration::from_secs(3), burst: 3 };
/// The bot in all chats: thirty a second.
const BOT: Rate = Rate { every: Duration::from_millis(34), burst: 30 };

/// Chats remembered; one quiet for longer than its burst needs is forgotten first.
const CHATS_KEPT: usize = 1_000;

/// When the next send may go, for the bot and for each chat.
#[derive(Debug, Default)]
pub struct Pacer {
    bot: Option<Instant>,
    chats: HashMap<String, Instant>,
}

impl Pacer {
    /// Books a send to `chat` asked for at `now`; how long it waits before it goes.
    pub fn book(&mut self, chat: &str, now: Instant) -> Duration {
        self.forget_quiet_chats(now);
        let rate = if chat.starts_with('-') { GROUP } else { PRIVATE };
        let at = earliest(self.chats.get(chat).copied(), rate, now).max(earliest(self.bot, BOT, now));
        self.chats.insert(chat.to_owned(), next(self.chats.get(chat).copied(), rate, at));
        self.bot = Some(next(self.bot, BOT, at));
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

/// `due` after a send at `at`.
fn next(due: Option<Instant>, rate: Rate, at: Instant) -> Instant {
    due.map_or(at, |d| d.max(at)) + rate.every
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
    fn a_group_gets_twenty_a_minute() {
        let (mut p, t0) = (Pacer::default(), Instant::now());
        let w = waits(&mut p, "-1001", t0, 23);
        assert_eq!(&w[..4], [0, 0, 0, 3000]);
        assert_eq!(w[22], 60_000, "the 23rd goes a minute on: 20 a minute after the burst");
    }

    #[test]
    fn chats_do_not_wait_for_each_other_but_all_share_the_bot_s_thirty_a_second() {
        let (mut p, t0) = (Pacer::default(), Instant::now());
        assert_eq!(p.book("1", t0), Duration::ZERO);
        assert_eq!(p.book("2", t0), Duration::ZERO, "another chat is not held by the first");
        let w: Vec<u128> = (3..40).map(|c| p.book(&c.to_string(), t0).as_millis()).collect();
        assert_eq!(w[..28], [0; 28], "thirty at once in all");
        assert!(w[28] > 0 && w[36] <= 34 * 9, "then about one each 34 ms: {w:?}");
    }
}
