//! The morning brief's content: what the day holds, gathered from the context once a morning
//! and written in the user's language. The items: what is due or happens later today (one
//! within its notice gets its own reminder now instead), the heads-ups whose window is open
//! and that were not said yet, and today's routines of this hour and the hours to come. Each item is also a message of its own (the text a "later" on it
//! sends again). The Sentinel sends it ([`crate::sentinel`]); this module only says what it is.

use super::deadlines::{told, Deadline};
use super::words;
use crate::time::{Language, Need};
use chrono::{DateTime, Datelike, Duration, Timelike, Utc};
use chrono_tz::Tz;
use raven_proto::{Routine, TopicFireHistory};
use std::collections::BTreeMap;

/// What the gate files the brief under, and how a conversation's latest brief is found.
pub const TOPIC: &str = "morning brief";

/// Which part of the brief an item is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Due or happening today.
    Today,
    /// A routine of today's weekday.
    Routine,
    /// A heads-up for a later day.
    Ahead,
}

/// One item: its topic, its line in the brief and its text as a message of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub part: Part,
    pub topic: String,
    pub line: String,
    pub text: String,
    /// The kind whose lead tells it this early (a heads-up more than a day ahead that its
    /// note did not ask for): what the learner shortens when the user dismisses such items.
    pub kind: Option<Need>,
}

/// The items of the brief at `now`, today's first, then routines, then the heads-ups whose
/// window is open by the end of today and that `history` says were not given in it yet.
pub fn items(
    now: DateTime<Utc>,
    tz: Tz,
    deadlines: &[Deadline],
    routines: &[Routine],
    history: &BTreeMap<String, TopicFireHistory>,
    lang: Language,
) -> Vec<Item> {
    let local = now.with_timezone(&tz);
    let today = local.date_naive();
    let start = crate::time::local_midnight(now, tz);
    let evening = crate::time::local_midnight(start + Duration::hours(36), tz) - Duration::minutes(1);
    let ahead = |d: &&Deadline| d.heads_up_window(evening).is_some() && !told(d, evening, history);
    let on = |d: &Deadline| d.due.with_timezone(&tz).date_naive();
    let mut out: Vec<Item> = deadlines
        .iter()
        .filter(|d| on(d) == today && d.due > now && !d.is_imminent(now))
        .map(|d| Item {
            part: Part::Today,
            topic: d.topic.clone(),
            line: words::listed(d, now, tz, lang),
            text: words::reminder(d, now, tz, lang),
            kind: None,
        })
        .collect();
    let mut today_routines: Vec<&Routine> =
        routines.iter().filter(|r| r.days.on(today.weekday()) && u32::from(r.hour) >= local.hour()).collect();
    today_routines.sort_by_key(|r| r.hour);
    out.extend(today_routines.into_iter().map(|r| Item {
        part: Part::Routine,
        topic: r.topic.clone(),
        line: routine_line(r, lang),
        text: words::routine(&r.topic, lang),
        kind: None,
    }));
    out.extend(deadlines.iter().filter(|d| on(d) > today).filter(ahead).map(|d| Item {
        part: Part::Ahead,
        topic: d.topic.clone(),
        line: words::listed(d, now, tz, lang),
        text: words::heads_up(d, now, tz, lang),
        kind: d.lead_for.filter(|_| d.heads_up_window(evening).is_some_and(|w| w > Duration::hours(24))),
    }));
    out
}

/// Whether `items` are worth a morning message: a dated item of today or ahead. Routines
/// alone are not (each gets its own nudge at its hour); they ride along when one goes.
pub fn says_something(items: &[Item]) -> bool {
    items.iter().any(|i| i.part != Part::Routine)
}

fn routine_line(r: &Routine, lang: Language) -> String {
    match lang {
        Language::English => format!("{} (usually at {:02}:00)", r.topic, r.hour),
        Language::Chinese => format!("「{}」（平常 {:02}:00）", words::habit(&r.topic), r.hour),
    }
}

/// The brief as one message: a greeting with the day, the numbered items under their parts,
/// and how to act on one (its buttons, or `/later 2`).
pub fn render(items: &[Item], now: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    let day = now.with_timezone(&tz).date_naive();
    let mut out = match lang {
        Language::English => format!("Good morning! Your day, {}:", day.format("%a %-d %b")),
        Language::Chinese => format!("早上好！今天 {}：", words::date_zh(day)),
    };
    let mut part = None;
    for (n, item) in (1..).zip(items) {
        if item.part == Part::Ahead && part != Some(Part::Ahead) {
            out.push_str(match lang {
                Language::English => "\nComing up:",
                Language::Chinese => "\n即将到来：",
            });
        }
        part = Some(item.part);
        out.push_str(&format!("\n{n}. {}", item.line));
    }
    out.push_str(match lang {
        Language::English => "\nFor one item: its buttons, or reply /later 1, /ok 1 or /stop 1 (its number).",
        Language::Chinese => "\n针对某一项：点它的按钮，或回复 /later 1、/ok 1 或 /stop 1（该项的编号）。",
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use raven_proto::RoutineDays;

    fn told_of(topic: &str, at: DateTime<Utc>) -> BTreeMap<String, TopicFireHistory> {
        let mut h = BTreeMap::new();
        h.insert(topic.to_owned(), TopicFireHistory { last_fired: Some(at), ..Default::default() });
        h
    }

    fn deadline(title: &str, topic: &str, due: DateTime<Utc>, all_day: bool) -> Deadline {
        Deadline { topic: topic.into(), ..Deadline::plain(title, due, all_day, false) }
    }

    #[test]
    fn the_day_s_items_routines_and_untold_heads_ups_in_order_and_nothing_past() {
        let tz = chrono_tz::Europe::Berlin;
        let at = |d: u32, h: u32| tz.with_ymd_and_hms(2026, 12, d, h, 0, 0).unwrap().with_timezone(&Utc);
        let now = at(7, 7);
        let dates = [
            deadline("Called the plumber", "plumber", at(7, 6), false),
            deadline("Call the bank", "bank", at(7, 15), false),
            deadline("Pay the rent", "rent", at(8, 23) + Duration::minutes(59), true),
            deadline("Told already", "told", at(8, 9), false),
            deadline("Far away", "far", at(30, 9), false),
        ];
        let routines = [
            Routine { topic: "medication".into(), hour: 8, days: RoutineDays::Every, days_seen: 5 },
            Routine { topic: "gym".into(), hour: 18, days: RoutineDays::Weekends, days_seen: 4 },
            Routine { topic: "coffee".into(), hour: 6, days: RoutineDays::Every, days_seen: 9 },
            Routine { topic: "vitamins".into(), hour: 7, days: RoutineDays::Every, days_seen: 9 },
        ];
        let got = items(now, tz, &dates, &routines, &told_of("told", now - Duration::hours(2)), Language::English);
        let lines: Vec<(Part, &str)> = got.iter().map(|i| (i.part, i.line.as_str())).collect();
        assert_eq!(
            lines,
            [
                (Part::Today, "Call the bank (is due at 15:00)"),
                (Part::Routine, "vitamins (usually at 07:00)"),
                (Part::Routine, "medication (usually at 08:00)"),
                (Part::Ahead, "Pay the rent (is due tomorrow)"),
            ]
        );
        assert_eq!(got[3].text, "Heads-up: Pay the rent is due tomorrow.");
        let brief = render(&got, now, tz, Language::English);
        assert_eq!(
            brief,
            "Good morning! Your day, Mon 7 Dec:\n1. Call the bank (is due at 15:00)\n\
             2. vitamins (usually at 07:00)\n3. medication (usually at 08:00)\nComing up:\n\
             4. Pay the rent (is due tomorrow)\n\
             For one item: its buttons, or reply /later 1, /ok 1 or /stop 1 (its number)."
        );
        assert!(says_something(&got));
        let none = BTreeMap::new();
        assert!(items(at(7, 23), tz, &dates[..2], &routines[..1], &none, Language::English).is_empty());
        let routines_only = items(now, tz, &[], &routines, &none, Language::English);
        assert_eq!(routines_only.len(), 2, "{routines_only:?}");
        assert!(!says_something(&routines_only), "routines alone are no brief: each has its own nudge");
    }

    #[test]
    fn the_brief_reads_in_chinese() {
        let tz = chrono_tz::Asia::Shanghai;
        let at = |d: u32, h: u32| tz.with_ymd_and_hms(2026, 12, d, h, 0, 0).unwrap().with_timezone(&Utc);
        let dates = [deadline("小宝 三岁体检", "体检", at(8, 10), false)];
        let got = items(at(7, 7), tz, &dates, &[], &BTreeMap::new(), Language::Chinese);
        let brief = render(&got, at(7, 7), tz, Language::Chinese);
        assert_eq!(
            brief,
            "早上好！今天 12月7日（周一）：\n即将到来：\n1. 「小宝 三岁体检」（明天 10:00到期）\n\
             针对某一项：点它的按钮，或回复 /later 1、/ok 1 或 /stop 1（该项的编号）。"
        );
    }
}
