//! How long, as a person says it: `10m`, `1h30m`, `1h 30m`, `90 minutes`, `2 hours`, `an hour`,
//! `1 hour and 30 minutes`. The unit words are humantime's (less the sub-second ones, and less
//! `M` for months, which a lower-cased input cannot tell from `m` for minutes).
//!
//! A duration is more than zero and at most 100 years (of 365.25 days). A bare number has no
//! unit, so it is not a duration: whoever reads one decides what it means.

use super::TimeError;
use chrono::Duration;

/// The longest duration accepted: 100 years of 365.25 days.
const MAX_SECS: u64 = 36_525 * 86_400;

/// The unit words accepted after a number, with or without a space between.
const UNITS: &[&str] = &[
    "s", "sec", "secs", "second", "seconds", "m", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour",
    "hours", "d", "day", "days", "w", "wk", "wks", "week", "weeks", "month", "months", "y", "yr", "yrs", "year",
    "years",
];

/// A whole string that is only a duration: `10m`, `1h 30m`, `90 minutes`. A bare number, zero, a
/// negative duration and anything over 100 years are refused, quoting `input`.
pub fn parse_duration(input: &str) -> Result<Duration, TimeError> {
    let lower = input.to_lowercase();
    let tokens: Vec<&str> = lower.split_whitespace().collect();
    match leading_duration(&tokens) {
        Some(Ok((duration, used))) if used == tokens.len() => Ok(duration),
        Some(Err(why)) => Err(TimeError::OutOfRange { input: input.into(), why: why.to_string() }),
        _ if is_number(lower.trim()) => Err(unreadable(input, "a number needs a unit (10m, 10 minutes)")),
        _ => Err(unreadable(input, "not a duration (10m, 1h30m, 90 minutes)")),
    }
}

/// The longest run of lower-case `tokens` at the start that spells a duration, and how many
/// tokens it took (`10m 2 pills` takes 1, `1h 30m stretch` 2, `90 minutes tea` 2). `None` when
/// the first token starts no duration; `Some(Err(why))` when the duration is zero, negative or
/// too long.
pub(super) fn leading_duration(tokens: &[&str]) -> Option<Result<(Duration, usize), Span>> {
    let (text, used) = duration_words(tokens)?;
    Some(to_duration(&text).map(|duration| (duration, used)))
}

/// The pieces at the start of `tokens` that make a duration, written as humantime reads them
/// (`an hour` is `1hour`), and how many tokens they took. Pieces may be joined by `and`.
fn duration_words(tokens: &[&str]) -> Option<(String, usize)> {
    let mut pieces: Vec<String> = Vec::new();
    let mut used = 0;
    loop {
        let rest = &tokens[used..];
        let joined = !pieces.is_empty() && rest.first() == Some(&"and");
        let skip = usize::from(joined);
        let Some((text, taken)) = piece(&rest[skip..]) else { break };
        pieces.push(text);
        used += skip + taken;
    }
    (!pieces.is_empty()).then(|| (pieces.join(" "), used))
}

/// One piece of a duration: a token like `1h30m`, or a number and a unit word (`90 minutes`,
/// `an hour`).
fn piece(tokens: &[&str]) -> Option<(String, usize)> {
    let first = *tokens.first()?;
    if is_compact(first) {
        return Some((first.to_owned(), 1));
    }
    let number = match first {
        "a" | "an" => "1",
        n if is_number(n) => n,
        _ => return None,
    };
    let unit = *tokens.get(1)?;
    UNITS.contains(&unit).then(|| (format!("{number}{unit}"), 2))
}

/// `10m`, `1h30m`, `1.5h`, `-5m`: numbers each followed by a unit, in one token.
fn is_compact(token: &str) -> bool {
    let mut rest = token.strip_prefix('-').unwrap_or(token);
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, tail) = rest.split_at(number_end);
        let unit_end = tail.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        if !is_number(number) || !UNITS.contains(&unit) {
            return false;
        }
        rest = tail;
    }
    true
}

/// `90`, `1.5`, `-5`.
fn is_number(text: &str) -> bool {
    let text = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && digits(fraction)
}

/// Why words that spell a duration give none that can be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Span {
    #[error("a duration must be more than zero")]
    NotPositive,
    #[error("too long (over 100 years) or too finely divided to count")]
    Overflow,
    #[error("shorter than a second")]
    UnderASecond,
    #[error("more than 100 years")]
    OverACentury,
    /// humantime's own reason.
    #[error("{0}")]
    Unreadable(String),
}

/// Counts the pieces with humantime (checked: no overflow, no wrap) and keeps the result in range.
fn to_duration(text: &str) -> Result<Duration, Span> {
    if text.contains('-') {
        return Err(Span::NotPositive);
    }
    let counted = humantime::parse_duration(text).map_err(|e| match e {
        humantime::DurationError::NumberOverflow => Span::Overflow,
        other => Span::Unreadable(other.to_string()),
    })?;
    if counted.is_zero() {
        return Err(Span::NotPositive);
    }
    if counted.as_secs() == 0 {
        return Err(Span::UnderASecond);
    }
    if counted.as_secs() > MAX_SECS || (counted.as_secs() == MAX_SECS && counted.subsec_nanos() > 0) {
        return Err(Span::OverACentury);
    }
    Duration::from_std(counted).map_err(|_| Span::OverACentury)
}

fn unreadable(input: &str, why: &str) -> TimeError {
    TimeError::Unreadable { input: input.into(), why: why.into() }
}
