//! One reader for every time expression a person types: durations (`in 10m`), clock times
//! (`at 7pm`), days and dates (`tomorrow at 9`, `on May 15 at 3pm`), recurrences (`every weekday
//! at 9`, `every 2 hours`, `@daily`, a raw cron expression) and RFC 3339 instants. Words are
//! case-insensitive; a `,`, `;` or `:` closing a word is ignored. Chinese is read as the same
//! words (`明天上午10点` is `tomorrow 10:00`, `每周二` is `every tuesday`; see `zh`).
//!
//! [`parse_when`] reads a string that is only a time; [`split_when`] reads the time at the start
//! of a reminder and hands back the text after it. Every refusal quotes the input as given.

mod moment;
mod recur;
mod wall;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod zh_tests;

use super::duration::leading_duration;
use super::zh;
use super::{DateOrder, TimeError, When};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// A time expression found at the start of the words, and how many words it took; `None` when
/// the words start with no form of this kind.
type Found<T> = Result<Option<(T, usize)>, TimeError>;

/// A whole string that is only a time expression (the CLI's `--at`/`--in`/`--every`/`--cron`
/// values, scenario files, preferences), read at `now` in the user's zone `tz`.
pub fn parse_when(input: &str, now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Result<When, TimeError> {
    let words = Words::new(input);
    let (when, used) = read(&words, now, tz, order, "not a time I know")?;
    match words.raw.get(used) {
        Some(extra) => Err(quoting(unreadable(format!("`{extra}` is not part of a time")), input)),
        None => Ok(when),
    }
}

/// The time expression at the start of a reminder, and the text after it: `in 1h 30m stretch` is
/// (90 minutes from now, `stretch`). The time takes the longest run of words it can (`in 10m 2
/// pills` leaves `2 pills`); the text must not be empty.
pub fn split_when(input: &str, now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Result<(When, &str), TimeError> {
    let words = Words::new(input);
    let (when, used) = read(&words, now, tz, order, "it does not start with a time I know")?;
    match words.rest_after(used) {
        "" => Err(quoting(unreadable("there is no text after the time"), input)),
        text => Ok((when, text)),
    }
}

/// The longest time expression at the start of `words`, and how many words it took; an
/// unreadable error saying `none_why` when there is none.
fn read(
    words: &Words,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
    none_why: &str,
) -> Result<(When, usize), TimeError> {
    if words.raw.is_empty() {
        return Err(quoting(unreadable("it is empty"), words.input));
    }
    let tokens = words.tokens();
    leading(&tokens, &words.raw, now, tz, order)
        .and_then(|found| found.ok_or_else(|| unreadable(none_why)))
        .map_err(|e| quoting(e, words.input))
}

/// Tries each form in turn: recurrences (and raw cron), durations, RFC 3339, then one instant
/// named by a day and/or a clock time.
fn leading(tokens: &[&str], raw: &[&str], now: DateTime<Utc>, tz: Tz, order: DateOrder) -> Found<When> {
    if let Some(found) = recur::recurrence(tokens, raw, tz)? {
        return Ok(Some(found));
    }
    if let Some((at, used)) = from_now(tokens, now)? {
        return Ok(Some((When::Once(at), used)));
    }
    if let Some(at) = raw.first().map_or(Ok(None), |token| rfc3339(token, now, tz))? {
        return Ok(Some((When::Once(at), 1)));
    }
    Ok(moment::one_shot(tokens, now, tz, order)?.map(|(at, used)| (When::Once(at), used)))
}

/// `in 10m`, `in 2 hours`, or a duration alone (`10m`, `90 minutes`; `an hour` only after `in`):
/// that long after `now`.
fn from_now(tokens: &[&str], now: DateTime<Utc>) -> Found<DateTime<Utc>> {
    let said_in = usize::from(tokens.first() == Some(&"in"));
    if said_in == 0 && matches!(tokens.first(), Some(&("a" | "an"))) {
        return Ok(None);
    }
    // `3 days from today` is a day (read with the other days), not a span from this minute.
    if said_in == 0 && tokens.get(2..4) == Some(&["from", "today"]) {
        return Ok(None);
    }
    match leading_duration(&tokens[said_in..]) {
        None if said_in == 1 => Err(unreadable("`in` needs a duration after it (10m, 2 hours)")),
        None => Ok(None),
        Some(Err(why)) => Err(out_of_range(why.to_string())),
        Some(Ok((duration, used))) => match now.checked_add_signed(duration) {
            Some(at) => Ok(Some((at, said_in + used))),
            None => Err(out_of_range("too far ahead")),
        },
    }
}

/// `2026-05-15T15:00:00+02:00` (an offset, or `Z`), or `2026-05-15T15:00` (read in `tz`).
fn rfc3339(token: &str, now: DateTime<Utc>, tz: Tz) -> Result<Option<DateTime<Utc>>, TimeError> {
    let at = match DateTime::parse_from_rfc3339(token) {
        Ok(at) => at.with_timezone(&Utc),
        Err(_) => {
            let naive = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"]
                .iter()
                .find_map(|format| chrono::NaiveDateTime::parse_from_str(token, format).ok());
            match naive {
                Some(local) => wall::instant(local, tz)?,
                None => return Ok(None),
            }
        }
    };
    wall::ahead(at, now, tz).map(Some)
}

/// The words of an input: as typed, lower-cased without a closing `,;:`, and where each starts.
struct Words<'a> {
    input: &'a str,
    raw: Vec<&'a str>,
    lower: Vec<String>,
    starts: Vec<usize>,
}

impl<'a> Words<'a> {
    /// Chinese text is cut into pieces first (see `zh`): each word a piece stands for is one
    /// word here, quoted and placed by its piece.
    fn new(input: &'a str) -> Self {
        let (mut raw, mut lower, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        for piece in zh::pieces(input) {
            for word in &piece.words {
                raw.push(piece.raw);
                lower.push(word.to_lowercase().trim_end_matches([',', ';', ':']).to_owned());
                starts.push(piece.start);
            }
        }
        Words { input, raw, lower, starts }
    }

    fn tokens(&self) -> Vec<&str> {
        self.lower.iter().map(String::as_str).collect()
    }

    /// The input after the first `used` words, trimmed.
    fn rest_after(&self, used: usize) -> &'a str {
        self.starts.get(used).map_or("", |&start| self.input[start..].trim())
    }
}

fn unreadable(why: impl Into<String>) -> TimeError {
    TimeError::Unreadable { input: String::new(), why: why.into() }
}

fn out_of_range(why: impl Into<String>) -> TimeError {
    TimeError::OutOfRange { input: String::new(), why: why.into() }
}

/// The same refusal, quoting `input` (the readers below the entry points leave it empty).
fn quoting(error: TimeError, input: &str) -> TimeError {
    let input = input.to_owned();
    match error {
        TimeError::Unreadable { why, .. } => TimeError::Unreadable { input, why },
        TimeError::OutOfRange { why, .. } => TimeError::OutOfRange { input, why },
        TimeError::Past { when, .. } => TimeError::Past { input, when },
    }
}
