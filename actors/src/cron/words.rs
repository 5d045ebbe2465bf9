//! A job's schedule as a person says it (`every weekday at 08:30`, `every month on the 20th at
//! 09:00`, `every 1h 30m`, `once, on Mon 7 Dec at 09:00`), for confirmations and listings in a
//! chat, in English or Chinese (`每个工作日 08:30`, `每月20日 09:00`, `一次，12月7日（周一）09:00`). A
//! cron expression with no plain reading is shown as it is.

use super::store::Schedule;
use crate::time::Language;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// `schedule` in words; times in `tz` (a cron job's own zone is named when it differs).
pub fn in_words(schedule: &Schedule, tz: Tz) -> String {
    in_words_in(schedule, tz, Language::English)
}

/// [`in_words`] in `lang`: `every weekday at 08:30`, `每个工作日 08:30`.
pub fn in_words_in(schedule: &Schedule, tz: Tz, lang: Language) -> String {
    let zh = lang == Language::Chinese;
    match schedule {
        Schedule::At { at } if zh => format!("一次，{}", day_and_time_in(*at, tz, lang)),
        Schedule::At { at } => format!("once, on {}", day_and_time(*at, tz)),
        Schedule::Every { every_s, .. } => {
            let every = humantime::format_duration(std::time::Duration::from_secs(*every_s));
            if zh {
                format!("每隔 {every}")
            } else {
                format!("every {every}")
            }
        }
        Schedule::Cron { expr, tz: zone } => {
            let said = match (plain(expr), zh) {
                (Some(p), true) => p.zh(),
                (Some(p), false) => p.en(),
                (None, true) => format!("按计划 {expr}"),
                (None, false) => format!("on the schedule {expr}"),
            };
            match (zone == tz.name(), zh) {
                (true, _) => said,
                (false, true) => format!("{said}（{zone}）"),
                (false, false) => format!("{said} ({zone})"),
            }
        }
    }
}

/// `Mon 7 Dec at 09:00` in `tz`.
pub fn day_and_time(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%a %-d %b at %H:%M").to_string()
}

/// [`day_and_time`] in `lang`: `12月7日（周一）09:00`.
pub fn day_and_time_in(t: DateTime<Utc>, tz: Tz, lang: Language) -> String {
    match lang {
        Language::English => day_and_time(t, tz),
        Language::Chinese => {
            let local = t.with_timezone(&tz);
            format!("{}{}", crate::context::words::date_zh(local.date_naive()), local.format("%H:%M"))
        }
    }
}

/// A 5-field expression of the usual shapes: a fixed minute and hour; every day, some
/// weekdays (0 is Sunday), or one day of the month.
struct Plain {
    hour: u32,
    minute: u32,
    days: Days,
}

enum Days {
    Daily,
    Weekly(Vec<usize>),
    Monthly(u32),
}

/// The plain reading of `expr`; `None` for anything else.
fn plain(expr: &str) -> Option<Plain> {
    let expr = match expr.trim() {
        "@daily" | "@midnight" => "0 0 * * *",
        "@weekly" => "0 0 * * 0",
        "@monthly" => "0 0 1 * *",
        e => e,
    };
    let f: Vec<&str> = expr.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = f.as_slice() else { return None };
    let (minute, hour): (u32, u32) = (minute.parse().ok()?, hour.parse().ok()?);
    if *month != "*" {
        return None;
    }
    let days = match (*dom, *dow) {
        ("*", "*") => Days::Daily,
        ("*", days) => Days::Weekly(weekdays(days)?),
        (d, "*") => Days::Monthly(d.parse().ok()?),
        _ => return None,
    };
    Some(Plain { hour, minute, days })
}

impl Plain {
    fn en(&self) -> String {
        let at = format!("at {:02}:{:02}", self.hour, self.minute);
        match &self.days {
            Days::Daily => format!("every day {at}"),
            Days::Weekly(days) => format!("every {} {at}", days_en(days)),
            Days::Monthly(d) => format!("every month on the {d}{} {at}", ordinal(*d)),
        }
    }

    fn zh(&self) -> String {
        const NAMES: [&str; 7] = ["日", "一", "二", "三", "四", "五", "六"];
        let at = format!("{:02}:{:02}", self.hour, self.minute);
        match &self.days {
            Days::Daily => format!("每天 {at}"),
            Days::Weekly(days) if days.as_slice() == [1, 2, 3, 4, 5] => format!("每个工作日 {at}"),
            Days::Weekly(days) => {
                // Sunday last, as the week is said.
                let mut days = days.clone();
                days.sort_by_key(|d| (d + 6) % 7);
                let names: Vec<String> = days.iter().map(|d| format!("周{}", NAMES[*d])).collect();
                format!("每{} {at}", names.join("、"))
            }
            Days::Monthly(d) => format!("每月{d}日 {at}"),
        }
    }
}

/// `1-5` → `[1, 2, 3, 4, 5]`; Sunday is 0 (or 7).
fn weekdays(field: &str) -> Option<Vec<usize>> {
    let mut days = Vec::new();
    for part in field.split(',') {
        match part.split_once('-') {
            Some((a, b)) => days.extend(day(a)?..=day(b)?),
            None => days.push(day(part)?),
        }
    }
    days.iter_mut().for_each(|d| *d %= 7);
    days.sort_unstable();
    days.dedup();
    Some(days)
}

/// `weekday`, `Saturday and Sunday`, `Monday, Wednesday and Friday`.
fn days_en(days: &[usize]) -> String {
    match days {
        [1, 2, 3, 4, 5] => "weekday".to_owned(),
        [0, 6] => "Saturday and Sunday".to_owned(),
        [one] => DAYS[*one].to_owned(),
        many => {
            let names: Vec<&str> = many.iter().map(|d| DAYS[*d]).collect();
            match names.split_last() {
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            }
        }
    }
}

fn day(s: &str) -> Option<usize> {
    let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    s.parse::<usize>().ok().filter(|d| *d <= 7).or_else(|| names.iter().position(|n| s.eq_ignore_ascii_case(n)))
}

fn ordinal(d: u32) -> &'static str {
    match (d % 10, d % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn cron(expr: &str) -> String {
        in_words(&Schedule::Cron { expr: expr.into(), tz: "Europe/Paris".into() }, chrono_tz::Europe::Paris)
    }

    #[test]
    fn the_usual_schedules_read_as_people_say_them() {
        let cases = [
            ("30 8 * * 1-5", "every weekday at 08:30"),
            ("0 9 * * *", "every day at 09:00"),
            ("0 17 * * 0,6", "every Saturday and Sunday at 17:00"),
            ("15 7 * * 2", "every Tuesday at 07:15"),
            ("0 19 * * 1,3,5", "every Monday, Wednesday and Friday at 19:00"),
            ("0 9 20 * *", "every month on the 20th at 09:00"),
            ("0 9 1 * *", "every month on the 1st at 09:00"),
            ("@daily", "every day at 00:00"),
            ("*/5 * * * *", "on the schedule */5 * * * *"),
        ];
        for (expr, said) in cases {
            assert_eq!(cron(expr), said, "{expr}");
        }
    }

    #[test]
    fn an_interval_a_one_shot_and_another_zone() {
        let tz = chrono_tz::Europe::Paris;
        let anchor = Utc.with_ymd_and_hms(2026, 12, 7, 8, 0, 0).unwrap();
        assert_eq!(in_words(&Schedule::Every { every_s: 5400, anchor }, tz), "every 1h 30m");
        assert_eq!(in_words(&Schedule::At { at: anchor }, tz), "once, on Mon 7 Dec at 09:00");
        let tokyo = Schedule::Cron { expr: "0 9 * * *".into(), tz: "Asia/Tokyo".into() };
        assert_eq!(in_words(&tokyo, tz), "every day at 09:00 (Asia/Tokyo)");
    }

    #[test]
    fn the_same_schedules_in_chinese() {
        let tz = chrono_tz::Asia::Shanghai;
        let cron = |expr: &str| Schedule::Cron { expr: expr.into(), tz: "Asia/Shanghai".into() };
        let zh = |s: &Schedule| in_words_in(s, tz, Language::Chinese);
        let cases = [
            ("30 8 * * 1-5", "每个工作日 08:30"),
            ("0 9 * * *", "每天 09:00"),
            ("0 17 * * 0,6", "每周六、周日 17:00"),
            ("0 19 * * 1,3,5", "每周一、周三、周五 19:00"),
            ("0 9 20 * *", "每月20日 09:00"),
            ("*/5 * * * *", "按计划 */5 * * * *"),
        ];
        for (expr, said) in cases {
            assert_eq!(zh(&cron(expr)), said, "{expr}");
        }
        let at = Utc.with_ymd_and_hms(2026, 12, 7, 1, 0, 0).unwrap();
        assert_eq!(zh(&Schedule::At { at }), "一次，12月7日（周一）09:00");
        assert_eq!(zh(&Schedule::Every { every_s: 5400, anchor: at }), "每隔 1h 30m");
        let paris = Schedule::Cron { expr: "0 9 * * *".into(), tz: "Europe/Paris".into() };
        assert_eq!(zh(&paris), "每天 09:00（Europe/Paris）");
    }
}
