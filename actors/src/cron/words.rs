//! A job's schedule as a person says it (`every weekday at 08:30`, `every month on the 20th at
//! 09:00`, `every 1h 30m`, `once, on Mon 7 Dec at 09:00`), for confirmations and listings in a
//! chat. A cron expression with no plain reading is shown as it is.

use super::store::Schedule;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// `schedule` in words; times in `tz` (a cron job's own zone is named when it differs).
pub fn in_words(schedule: &Schedule, tz: Tz) -> String {
    match schedule {
        Schedule::At { at } => format!("once, on {}", day_and_time(*at, tz)),
        Schedule::Every { every_s, .. } => {
            format!("every {}", humantime::format_duration(std::time::Duration::from_secs(*every_s)))
        }
        Schedule::Cron { expr, tz: zone } => {
            let said = cron_in_words(expr).unwrap_or_else(|| format!("on the schedule {expr}"));
            match zone == tz.name() {
                true => said,
                false => format!("{said} ({zone})"),
            }
        }
    }
}

/// `Mon 7 Dec at 09:00` in `tz`.
pub fn day_and_time(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%a %-d %b at %H:%M").to_string()
}

/// A 5-field expression of the usual shapes (a fixed minute and hour; every day, some
/// weekdays, or one day of the month) in words; `None` for anything else.
fn cron_in_words(expr: &str) -> Option<String> {
    let expr = match expr.trim() {
        "@daily" | "@midnight" => "0 0 * * *",
        "@weekly" => "0 0 * * 0",
        "@monthly" => "0 0 1 * *",
        e => e,
    };
    let f: Vec<&str> = expr.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = f.as_slice() else { return None };
    let (m, h): (u32, u32) = (minute.parse().ok()?, hour.parse().ok()?);
    let at = format!("at {h:02}:{m:02}");
    if *month != "*" {
        return None;
    }
    match (*dom, *dow) {
        ("*", "*") => Some(format!("every day {at}")),
        ("*", days) => Some(format!("every {} {at}", weekdays(days)?)),
        (d, "*") => {
            let d: u32 = d.parse().ok()?;
            Some(format!("every month on the {}{} {at}", d, ordinal(d)))
        }
        _ => None,
    }
}

/// `1-5` → `weekday`, `0,6` → `Saturday and Sunday`, `1,3` → `Monday and Wednesday`.
fn weekdays(field: &str) -> Option<String> {
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
    Some(match days.as_slice() {
        [1, 2, 3, 4, 5] => "weekday".to_owned(),
        [0, 6] => "Saturday and Sunday".to_owned(),
        [one] => DAYS[*one].to_owned(),
        many => {
            let names: Vec<&str> = many.iter().map(|d| DAYS[*d]).collect();
            let (last, rest) = names.split_last()?;
            format!("{} and {last}", rest.join(", "))
        }
    })
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
}
