//! Recurrences: fixed intervals (`every 10m`, `every 2 hours`) and wall-clock schedules, which
//! become 5-field cron expressions read in the user's zone: `every day at 9` (`0 9 * * *`),
//! `daily at 7:30`, `every weekday at 9` (`0 9 * * 1-5`), `every weekend at 10` (`0 10 * * 0,6`),
//! `every monday and thursday at 18:00` (`0 18 * * 1,4`), `every month on the 20th` and `on the
//! 20th of every month` (`0 9 20 * *`), `every hour`, the nicknames `@hourly` `@daily` `@weekly`
//! `@monthly` (and `@yearly`, `@annually`, `@midnight`), and a raw 5- or 6-field cron expression,
//! kept as given.
//!
//! Weekdays are numbered as cron does, 0 = Sunday. A schedule without a clock time is at 09:00;
//! `every month` without a day is on the 1st. A day of the month past 28 (`the 31st`) fires only
//! in the months that have it. `every 2 days` is an interval (48 hours from now, again and
//! again); `every day` is a wall-clock schedule.

use super::super::words;
use super::moment::{clock_at, MORNING};
use super::{leading_duration, out_of_range, unreadable, Found, TimeError, When};
use chrono::{NaiveTime, Timelike};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};

/// The recurrence at the start of `tokens` (lower-cased; `raw` as typed, for a cron expression).
pub(super) fn recurrence(tokens: &[&str], raw: &[&str], tz: Tz) -> Found<When> {
    let cron = |expr: String| When::Cron { expr, tz };
    match tokens {
        ["every", ..] => every(tokens, tz).map(Some),
        ["daily", ..] => at_time(tokens, 1, "*", "*", tz).map(Some),
        ["hourly", ..] => Ok(Some((cron("0 * * * *".into()), 1))),
        [nickname, ..] if nickname.starts_with('@') => Ok(Some((cron(expand(nickname)?.into()), 1))),
        ["on", ..] => monthly_on(tokens, 1, tz),
        ["the", ..] => monthly_on(tokens, 0, tz),
        _ => Ok(raw_cron(raw).map(|(expr, used)| (cron(expr), used))),
    }
}

/// `every` and what follows it: an interval, or a schedule on days.
fn every(tokens: &[&str], tz: Tz) -> Result<(When, usize), TimeError> {
    match leading_duration(&tokens[1..]) {
        Some(Ok((interval, used))) => return Ok((When::Every(interval), used + 1)),
        Some(Err(why)) => return Err(out_of_range(why.to_string())),
        None => {}
    }
    let cron = |expr: &str| When::Cron { expr: expr.into(), tz };
    match &tokens[1..] {
        ["minute", ..] => Ok((cron("* * * * *"), 2)),
        ["hour", ..] => Ok((cron("0 * * * *"), 2)),
        ["day", ..] => at_time(tokens, 2, "*", "*", tz),
        ["weekday" | "weekdays", ..] => at_time(tokens, 2, "*", "1-5", tz),
        ["weekend" | "weekends", ..] => at_time(tokens, 2, "*", "0,6", tz),
        ["month", rest @ ..] => {
            let (day, named) = day_of_month(rest).unwrap_or((1, 0));
            at_time(tokens, 2 + named, &day.to_string(), "*", tz)
        }
        rest => match weekdays(rest) {
            Some((days, named)) => at_time(tokens, 1 + named, "*", &days, tz),
            None => Err(unreadable(
                "`every` needs an interval (10m, 2 hours) or days (day, weekday, monday, month on the 20th) after it",
            )),
        },
    }
}

/// `on the 20th`, `the 20th` (after `every month`): the day of the month and the tokens it took.
fn day_of_month(tokens: &[&str]) -> Option<(u32, usize)> {
    let said_on = usize::from(tokens.first() == Some(&"on"));
    match &tokens[said_on..] {
        ["the", nth, ..] => words::ordinal(nth).map(|day| (day, said_on + 2)),
        [nth, ..] => words::ordinal(nth).map(|day| (day, said_on + 1)),
        [] => None,
    }
}

/// `the 20th of every month`, from token `from` on (after an optional `on`).
fn monthly_on(tokens: &[&str], from: usize, tz: Tz) -> Found<When> {
    let ["the", nth, "of", "every", "month", ..] = &tokens[from..] else { return Ok(None) };
    let Some(day) = words::ordinal(nth) else { return Ok(None) };
    at_time(tokens, from + 5, &day.to_string(), "*", tz).map(Some)
}

/// `monday`, `monday and thursday`, `mon, wed, fri`: the cron day-of-week list (0 = Sunday) and
/// the tokens it took.
fn weekdays(tokens: &[&str]) -> Option<(String, usize)> {
    let mut days = Vec::new();
    let mut used = 0;
    while let Some(day) = tokens.get(used).and_then(|word| words::weekday(word)) {
        days.push(day.num_days_from_sunday());
        used += 1;
        let and_another = tokens.get(used + 1).and_then(|word| words::weekday(word)).is_some();
        if tokens.get(used) == Some(&"and") && and_another {
            used += 1;
        }
    }
    days.sort_unstable();
    days.dedup();
    let list: Vec<String> = days.iter().map(u32::to_string).collect();
    (!list.is_empty()).then(|| (list.join(","), used))
}

/// The schedule on `day_of_month` and `day_of_week`, at the clock time that may follow the
/// first `from` tokens (09:00 when none does), and the tokens taken in all.
fn at_time(
    tokens: &[&str],
    from: usize,
    day_of_month: &str,
    day_of_week: &str,
    tz: Tz,
) -> Result<(When, usize), TimeError> {
    let (time, used) = clock_at(&tokens[from..])?.unwrap_or((MORNING, 0));
    Ok((When::Cron { expr: daily_expr(time, day_of_month, day_of_week), tz }, from + used))
}

fn daily_expr(time: NaiveTime, day_of_month: &str, day_of_week: &str) -> String {
    format!("{} {} {day_of_month} * {day_of_week}", time.minute(), time.hour())
}

/// `@hourly` and the other nicknames, as 5-field expressions.
fn expand(nickname: &str) -> Result<&'static str, TimeError> {
    match nickname {
        "@hourly" => Ok("0 * * * *"),
        "@daily" | "@midnight" => Ok("0 0 * * *"),
        "@weekly" => Ok("0 0 * * 0"),
        "@monthly" => Ok("0 0 1 * *"),
        "@yearly" | "@annually" => Ok("0 0 1 1 *"),
        _ => Err(unreadable(format!("`{nickname}` is not a cron nickname (@hourly, @daily, @weekly, @monthly)"))),
    }
}

/// A cron expression of 6 or 5 fields at the start of `raw` (the longest that croner accepts),
/// its words as typed (less a closing `,` or `;`) joined by single spaces, and the words it took.
fn raw_cron(raw: &[&str]) -> Option<(String, usize)> {
    let first = raw.first()?;
    if !first.starts_with(|c: char| c.is_ascii_digit() || c == '*' || c == '?') {
        return None;
    }
    [6, 5].into_iter().filter(|&fields| fields <= raw.len()).find_map(|fields| {
        let words: Vec<&str> = raw[..fields].iter().map(|w| w.trim_end_matches([',', ';'])).collect();
        let expr = words.join(" ");
        is_cron(&expr).then_some((expr, fields))
    })
}

fn is_cron(expr: &str) -> bool {
    CronParser::builder().seconds(Seconds::Optional).year(Year::Disallowed).build().parse(expr).is_ok()
}
