//! Asking for quiet in words: "I need some quiet tonight", "leave me alone", "让我静静",
//! "今天别打扰我". Such a message, in any chat, snoozes proactive messages until the next
//! morning at least an hour away (the morning brief's time: when quiet hours end, or 08:00 with
//! none), as `/snooze` would, and is answered
//! at once, in the message's language, with the time and the way out. The reminders the user
//! set themselves still come. No model is needed: the phrases are a short list, matched only in
//! a short message that is not a command, so a long note that quotes one is left alone.

use crate::time::Language;
use chrono::{DateTime, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;

/// Longer messages are not taken for a request for quiet (a note, a story that quotes one).
const SHORT: usize = 240;

const ENGLISH: &[&str] = &[
    "leave me alone",
    "need some quiet",
    "want some quiet",
    "need some peace",
    "give me some space",
    "need some space",
    "no more messages",
    "stop messaging me",
    "don't message me",
    "do not message me",
    "don't bother me",
    "do not bother me",
    "do not disturb me",
    "don't disturb me",
];

const CHINESE: &[&str] = &[
    "让我静静",
    "让我静一静",
    "别打扰我",
    "不要打扰我",
    "别烦我",
    "不要烦我",
    "别发消息",
    "不要发消息",
    "别提醒我了",
    "安静一下",
    "想清静",
    "想安静",
];

/// Whether `text` asks for quiet: a short message, not a command, with one of the phrases.
pub fn asks_for_quiet(text: &str) -> bool {
    says_one_of(text, SHORT, &[ENGLISH, CHINESE].concat())
}

/// Whether `text` is a message of at most `short` characters, not a command, that says one
/// of `phrases` (lower-case; a curly apostrophe counts as a straight one).
pub(super) fn says_one_of(text: &str, short: usize, phrases: &[&str]) -> bool {
    let text = text.trim();
    if text.is_empty() || text.starts_with('/') || text.chars().count() > short {
        return false;
    }
    let lower = text.to_lowercase().replace('’', "'");
    phrases.iter().any(|p| lower.contains(p))
}

/// The next `morning` (local) at least an hour after `now`: when the quiet asked for ends.
pub fn until(now: DateTime<Utc>, tz: Tz, morning: NaiveTime) -> DateTime<Utc> {
    let earliest = (now + Duration::hours(1)).with_timezone(&tz);
    let mut day = earliest.date_naive();
    if earliest.time() >= morning {
        day = day.succ_opt().unwrap_or(day);
    }
    // A morning that a clock change skips is taken an hour later.
    let local = tz.from_local_datetime(&day.and_time(morning));
    local.earliest().map(|t| t.to_utc()).unwrap_or_else(|| now + Duration::hours(12))
}

/// The answer: the quiet's end, and how to end it sooner, in `lang`.
pub fn answer(until: DateTime<Utc>, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    let (at, then) = (until.with_timezone(&tz), now.with_timezone(&tz));
    let tomorrow = at.date_naive() > then.date_naive();
    let hm = at.format("%H:%M");
    match (lang, tomorrow) {
        (Language::Chinese, true) => {
            format!("好的，我先不打扰你，到明天 {hm} 为止。你自己设的提醒照常会来。想提前结束，发 /snooze off。")
        }
        (Language::Chinese, false) => {
            format!("好的，我先不打扰你，到今天 {hm} 为止。你自己设的提醒照常会来。想提前结束，发 /snooze off。")
        }
        (Language::English, true) => format!(
            "Understood. I'll keep quiet until {hm} tomorrow; the reminders you set yourself still come. \
             Send /snooze off to end it sooner."
        ),
        (Language::English, false) => format!(
            "Understood. I'll keep quiet until {hm} today; the reminders you set yourself still come. \
             Send /snooze off to end it sooner."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_asking_for_quiet_are_told_from_others() {
        let asks = [
            "Awful day. The board moved the meeting and both kids are sick. I need some quiet tonight.",
            "Please leave me alone for today",
            "Don’t message me tonight",
            "今天太累了，让我静静",
            "今晚别打扰我",
        ];
        for text in asks {
            assert!(asks_for_quiet(text), "{text}");
        }
        let others = [
            "I need quiet hours from 22:00, can you set that?",
            "/snooze 2h",
            "Remind me to call mum",
            "明天上午10点 交报告",
            "",
        ];
        for text in others {
            assert!(!asks_for_quiet(text), "{text}");
        }
        let long = format!("{} leave me alone", "word ".repeat(60));
        assert!(!asks_for_quiet(&long), "a long message quoting the phrase is not a request");
    }

    #[test]
    fn the_quiet_lasts_until_the_next_morning_at_least_an_hour_away() {
        let tz = chrono_tz::Europe::London;
        let seven = NaiveTime::from_hms_opt(7, 0, 0).unwrap();
        let at = |d: u32, h: u32, m: u32| tz.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap().to_utc();
        assert_eq!(until(at(17, 17, 5), tz, seven), at(18, 7, 0), "an evening: until tomorrow morning");
        assert_eq!(until(at(18, 2, 0), tz, seven), at(18, 7, 0), "the night: until this morning");
        assert_eq!(until(at(18, 6, 30), tz, seven), at(19, 7, 0), "less than an hour before: the next one");
    }

    #[test]
    fn the_answer_says_until_when_in_the_user_s_language_and_the_way_out() {
        let tz = chrono_tz::Asia::Shanghai;
        let now = tz.with_ymd_and_hms(2026, 3, 17, 20, 0, 0).unwrap().to_utc();
        let end = tz.with_ymd_and_hms(2026, 3, 18, 7, 0, 0).unwrap().to_utc();
        let zh = answer(end, now, tz, Language::Chinese);
        assert!(zh.contains("明天 07:00") && zh.contains("/snooze off"), "{zh}");
        let en = answer(end, now, tz, Language::English);
        assert!(en.contains("until 07:00 tomorrow") && en.contains("/snooze off"), "{en}");
    }
}
