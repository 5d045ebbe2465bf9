//! What the rules say to the user about a dated item or a routine, in the user's language
//! ([`Language`]): the reminder when it is due, the heads-up before it, the routine's nudge.
//! The titles stay as the notes wrote them; the journal's reasons stay English (they are read
//! with `raven why`, beside the engine's other words).

use super::deadlines::Deadline;
use crate::time::Language;
use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

/// `It's about the time you usually handle medication.`, `差不多到你平常「吃药」的时间了。`
pub fn routine(topic: &str, lang: Language) -> String {
    match lang {
        Language::English => format!("It's about the time you usually handle {topic}."),
        Language::Chinese => format!("差不多到你平常「{}」的时间了。", habit(topic)),
    }
}

/// A habit learned from what the user said they did, as the thing they do: `吃完药了` is
/// `吃药`, `跑完步了` is `跑步` (the particles that say it is done are dropped). Other words,
/// and English, are kept as they are.
pub fn habit(topic: &str) -> String {
    let t = topic.strip_suffix('了').unwrap_or(topic);
    let mut chars: Vec<char> = t.chars().collect();
    if chars.len() >= 3 && matches!(chars[1], '完' | '好' | '过') {
        chars.remove(1);
    }
    chars.into_iter().collect()
}

/// A reminder the user scheduled, as it goes out without a model: `Reminder: call mum`,
/// `提醒：给妈妈打电话`.
pub fn job_reminder(text: &str, lang: Language) -> String {
    match lang {
        Language::English => format!("Reminder: {text}"),
        Language::Chinese => format!("提醒：{text}"),
    }
}

/// `Reminder: Submit the report is due at 17:00.`
pub fn reminder(d: &Deadline, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    match lang {
        Language::English => format!("Reminder: {} {}.", d.title, due_words(d, now, tz, lang)),
        Language::Chinese => format!("提醒：「{}」{}。", d.title, due_words(d, now, tz, lang)),
    }
}

/// `Heads-up: Pay the rent is due on Fri 20 Mar.`
pub fn heads_up(d: &Deadline, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    match lang {
        Language::English => {
            let verb = if d.event { "is" } else { "is due" };
            format!("Heads-up: {} {verb} {}.", d.title, d.when(now, tz))
        }
        Language::Chinese => {
            let verb = if d.event { "开始" } else { "到期" };
            format!("提前提醒：「{}」{}{verb}。", d.title, when_zh(d, now, tz))
        }
    }
}

/// How a due time reads after the item's title: `is due at 12:25`, `was due at 11:40`,
/// `starts at 12:30`, `is due now`; `12:25 到期`, `已于 11:40 到期`, `12:30 开始`, `现在到期`.
pub fn due_words(d: &Deadline, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    match lang {
        Language::English => match d.due <= now {
            true if d.due == now => "is due now".to_owned(),
            true => format!("was due {}", d.when(now, tz)),
            false if d.event => format!("starts {}", d.when(now, tz)),
            false => format!("is due {}", d.when(now, tz)),
        },
        Language::Chinese => match d.due <= now {
            true if d.due == now => "现在到期".to_owned(),
            true => format!("已于{}到期", when_zh(d, now, tz)),
            false if d.event => format!("{}开始", when_zh(d, now, tz)),
            false => format!("{}到期", when_zh(d, now, tz)),
        },
    }
}

/// The list after a reminder's first item: ` Also: A (is due at 12:00); B (…); and 2 more.`
pub fn also(listed: &[String], more: usize, lang: Language) -> String {
    match (lang, more) {
        (Language::English, 0) => format!(" Also: {}.", listed.join("; ")),
        (Language::English, n) => format!(" Also: {}; and {n} more.", listed.join("; ")),
        (Language::Chinese, 0) => format!("另有：{}。", listed.join("；")),
        (Language::Chinese, n) => format!("另有：{}；还有 {n} 项。", listed.join("；")),
    }
}

/// One listed item: `A (is due at 12:00)`, `「A」（12:00 到期）`.
pub fn listed(d: &Deadline, now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    match lang {
        Language::English => format!("{} ({})", d.title, due_words(d, now, tz, lang)),
        Language::Chinese => format!("「{}」（{}）", d.title, due_words(d, now, tz, lang)),
    }
}

/// A reminder the daily menu offers for an item: an hour before a timed one, on the morning
/// of a whole day's.
pub struct Offer {
    pub title: String,
    /// When the item is: `on Sun 20 Dec`, `tomorrow at 10:00`; `due on …` for a duty.
    pub reason: String,
    /// The reminder's own text, once picked.
    pub message: String,
}

pub fn offer(d: &Deadline, now: DateTime<Utc>, tz: Tz, lang: Language) -> Offer {
    let day = d.due.with_timezone(&tz).date_naive();
    match lang {
        Language::English => {
            let verb = match (d.all_day, d.event) {
                (false, true) => "starts",
                (true, true) => "is",
                (_, false) => "is due",
            };
            let (lead, message) = match d.all_day {
                false => ("an hour before".to_owned(), format!("{} {verb} in an hour", d.title)),
                true => (format!("on the morning of {}", day.format("%a %-d %b")), format!("{} {verb} today", d.title)),
            };
            let reason = if d.event { d.when(now, tz) } else { format!("due {}", d.when(now, tz)) };
            Offer { title: format!("Remind me of “{}” {lead}", d.title), reason, message }
        }
        Language::Chinese => {
            let verb = if d.event { "开始" } else { "到期" };
            let (title, message) = match d.all_day {
                false => (format!("提前一小时提醒「{}」", d.title), format!("提醒：「{}」一小时后{verb}", d.title)),
                true => {
                    (format!("{}早上提醒「{}」", date_zh(day), d.title), format!("提醒：「{}」今天{verb}", d.title))
                }
            };
            let reason = if d.event { when_zh(d, now, tz) } else { format!("{}到期", when_zh(d, now, tz)) };
            Offer { title, reason, message }
        }
    }
}

/// `3月20日（周五）`.
pub(crate) fn date_zh(day: chrono::NaiveDate) -> String {
    const WEEKDAYS: [&str; 7] = ["一", "二", "三", "四", "五", "六", "日"];
    let weekday = WEEKDAYS[day.weekday().num_days_from_monday() as usize];
    format!("{}月{}日（周{weekday}）", day.month(), day.day())
}

/// `今天`, `明天 15:00`, `3月20日（周五）`, `3月20日（周五）15:00`.
fn when_zh(d: &Deadline, now: DateTime<Utc>, tz: Tz) -> String {
    let local = d.due.with_timezone(&tz);
    let today = now.with_timezone(&tz).date_naive();
    let day = match (local.date_naive() - today).num_days() {
        0 => "今天".to_owned(),
        1 => "明天".to_owned(),
        _ => date_zh(local.date_naive()),
    };
    match d.all_day {
        true => day,
        false => format!("{day} {}", local.format("%H:%M")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn item(title: &str, due: DateTime<Utc>, all_day: bool, event: bool) -> Deadline {
        Deadline::plain(title, due, all_day, event)
    }

    #[test]
    fn each_message_reads_in_english_and_in_chinese() {
        let tz = chrono_tz::Asia::Shanghai;
        let at = |d: u32, h: u32, m: u32| tz.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap().with_timezone(&Utc);
        let now = at(17, 7, 0);
        let pay = item("付保姆工资 5000", at(20, 23, 59), true, false);
        let checkup = item("小宝 三岁体检", at(18, 10, 0), false, true);
        let report = item("Submit the report", at(17, 17, 0), false, false);
        let (en, zh) = (Language::English, Language::Chinese);
        let cases = [
            (heads_up(&pay, now, tz, en), "Heads-up: 付保姆工资 5000 is due on Fri 20 Mar."),
            (heads_up(&pay, now, tz, zh), "提前提醒：「付保姆工资 5000」3月20日（周五）到期。"),
            (heads_up(&checkup, now, tz, zh), "提前提醒：「小宝 三岁体检」明天 10:00开始。"),
            (reminder(&report, now, tz, en), "Reminder: Submit the report is due at 17:00."),
            (reminder(&report, now, tz, zh), "提醒：「Submit the report」今天 17:00到期。"),
            (reminder(&report, at(17, 17, 0), tz, zh), "提醒：「Submit the report」现在到期。"),
            (reminder(&report, at(17, 18, 0), tz, zh), "提醒：「Submit the report」已于今天 17:00到期。"),
            (routine("medication", zh), "差不多到你平常「medication」的时间了。"),
            (routine("吃完药了", zh), "差不多到你平常「吃药」的时间了。"),
            (routine("健身打卡", zh), "差不多到你平常「健身打卡」的时间了。"),
            (routine("medication", en), "It's about the time you usually handle medication."),
            (job_reminder("给妈妈打电话", zh), "提醒：给妈妈打电话"),
            (job_reminder("call mum", en), "Reminder: call mum"),
            (also(&[listed(&checkup, now, tz, zh)], 2, zh), "另有：「小宝 三岁体检」（明天 10:00开始）；还有 2 项。"),
            (also(&[listed(&checkup, now, tz, en)], 0, en), " Also: 小宝 三岁体检 (starts tomorrow at 10:00)."),
        ];
        for (said, expected) in cases {
            assert_eq!(said, expected);
        }
    }
}
