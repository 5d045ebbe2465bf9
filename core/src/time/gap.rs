//! A clock time the calendar skips: on the day the clocks go forward, `02:30` does not exist
//! (New York, 14 March 2027: 02:00 becomes 03:00). The parser takes the first minute after the
//! gap; this says so, in the confirmation the user reads, rather than moving it without a word.

use super::words;
use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// When `input` names a clock time that does not exist on the local day of `at` in `tz`, the
/// words that say so and what was set instead.
pub fn skipped_clock(input: &str, at: DateTime<Utc>, tz: Tz) -> Option<String> {
    let lower: Vec<String> = input.split_whitespace().map(str::to_lowercase).collect();
    let tokens: Vec<&str> = lower.iter().map(String::as_str).collect();
    // A word that reads as a clock time: `02:30`, `2:30am`, `2 am`, or a bare hour after `at`
    // (not a date such as `2027-03-14`).
    let meridiem = |w: &str| w.ends_with("am") || w.ends_with("pm");
    let said = (0..tokens.len()).find_map(|i| {
        let after_at = i > 0 && tokens[i - 1] == "at";
        let clocky = tokens[i].contains(':') || meridiem(tokens[i]) || tokens.get(i + 1).is_some_and(|w| meridiem(w));
        (clocky || after_at).then(|| words::clock(&tokens[i..], after_at)).flatten().map(|(t, _)| t)
    })?;
    let local = at.with_timezone(&tz);
    if tz.from_local_datetime(&local.date_naive().and_time(said)).earliest().is_some() {
        return None;
    }
    Some(format!(
        "{} does not exist on {} in {tz} (the clocks skip it): set for {}.",
        said.format("%H:%M"),
        local.format("%a %-d %b"),
        local.format("%H:%M")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_time_in_the_spring_gap_is_named_and_others_are_not() {
        let ny = chrono_tz::America::New_York;
        let at = Utc.with_ymd_and_hms(2027, 3, 14, 7, 0, 0).unwrap(); // 03:00 EDT
        let said = skipped_clock("2027-03-14 02:30", at, ny).unwrap();
        assert_eq!(said, "02:30 does not exist on Sun 14 Mar in America/New_York (the clocks skip it): set for 03:00.");
        assert!(skipped_clock("tomorrow at 2:30am walk", at, ny).is_some());
        assert_eq!(skipped_clock("2027-03-14 03:00", at, ny), None);
        assert_eq!(skipped_clock("in 2h", at, ny), None);
        let later = Utc.with_ymd_and_hms(2027, 3, 15, 6, 30, 0).unwrap();
        assert_eq!(skipped_clock("tomorrow at 2:30am", later, ny), None, "the day after has a 02:30");
    }
}
