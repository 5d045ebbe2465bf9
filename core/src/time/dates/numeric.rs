//! A numeric date standing as a whole word: `2026-05-15` (ISO), `5/15`, `5/15/2026`, `5/15/26`
//! (month first, or day first by the user's `DateOrder`), `15.5.`, `15.05.`, `15.05.2026` (always
//! day first). The word is taken whole, punctuation around it aside (`(2026-05-15)`,
//! `2026-05-15.` at the end of a sentence); a word with anything else in it (`v2.0.15`,
//! `555-1234`, `5/15/2026/1`) is not a date.
//!
//! With a year, a valid numeric date always counts. Without one, `1/2`, `3/4` and `12.5.` are
//! also a fraction and a decimal, so the date counts only with evidence that it is one:
//! - a part written with a leading zero (`05/06`, `15.05.`): nobody pads a fraction;
//! - a `/` day above 12 (`5/20`), which no common fraction has;
//! - a date word just before it (`on`, `due`, `deadline`, `until`, `am`, `le`, `el`, `il`, `den`,
//!   `op`, `bis`, `vom`, or a weekday);
//! - a clock time just after it (`3/4 at 3pm`, `15.5. um 15:00`);
//! - Chinese just before or after it (`作业；12/15`, `12/10 结婚纪念日`), which writes its fractions
//!   in words.
//!
//! It never counts when the next word is `of` or a measure (`1/2 cup`, `3/4 of the budget`,
//! `5/16 inch`, `1/2 tablet`, `1/2杯`, `3/4的预算`), and `24/7` is never a date. `by` is no
//! evidence: `cut by 1/2`.

use super::super::words::{numeric_date, weekday};
use super::super::zh::is_cjk;
use super::super::DateOrder;
use super::line::is_one_of;
use super::phrase::{time_after, Day};

/// Words before a yearless numeric date that show it is a date.
const CUES: &[&str] = &["on", "due", "deadline", "until", "till", "am", "le", "el", "il", "den", "op", "bis", "vom"];

/// Words after a number that make it a quantity (singular; a plural `s` is allowed).
const MEASURES: &str = "of cup tsp tbsp teaspoon tablespoon inch inches oz ounce lb lbs pound kg gram ml liter litre \
    mile km cm mm ft foot feet yard gallon pint quart pill tablet dose slice piece part share portion";

/// Chinese words after a number that make it a quantity or a part (`1/2杯`, `3/4的预算`).
const CHINESE_MEASURES: &[&str] = &[
    "的", "之", "杯", "勺", "份", "片", "粒", "克", "斤", "公斤", "毫升", "升", "米", "公里", "个", "块", "次", "页",
    "小时", "分钟",
];

/// The numeric date at word `i`, when it reads as one.
pub(super) fn numeric(words: &[&str], i: usize, order: DateOrder) -> Option<Day> {
    let word = words[i];
    if !word.contains(['/', '-', '.']) {
        return None;
    }
    let token = if word.contains(['-', '/']) { word.trim_end_matches('.') } else { word };
    if token == "24/7" {
        return None;
    }
    let (year, month, day) = numeric_date(token, order)?;
    let found = Day { year, month, day };
    if year.is_some() {
        return Some(found);
    }
    if words.get(i + 1).is_some_and(|next| is_measure(next)) {
        return None;
    }
    let evidence = zero_padded(token)
        || (token.contains('/') && day > 12)
        || cue_before(words, i)
        || time_after(words, i + 1).is_some()
        || chinese_beside(words, i);
    evidence.then_some(found)
}

/// A part written with a leading zero: `05/06`, `15.05.`.
fn zero_padded(token: &str) -> bool {
    token.split(['/', '.']).any(|part| part.len() == 2 && part.starts_with('0'))
}

fn cue_before(words: &[&str], i: usize) -> bool {
    let Some(before) = i.checked_sub(1).map(|b| words[b]) else {
        return false;
    };
    is_one_of(before, CUES) || weekday(before).is_some()
}

/// Chinese just before or after it (`作业；12/15`, `12/10 结婚纪念日`): Chinese writes its
/// fractions in words (`四分之三`).
fn chinese_beside(words: &[&str], i: usize) -> bool {
    let chinese = |k: usize| words.get(k).is_some_and(|w| w.chars().any(is_cjk));
    i.checked_sub(1).is_some_and(chinese) || chinese(i + 1)
}

fn is_measure(word: &str) -> bool {
    if CHINESE_MEASURES.iter().any(|m| word.starts_with(m)) {
        return true;
    }
    let singular = word.strip_suffix(['s', 'S']).unwrap_or(word);
    MEASURES.split(' ').any(|m| word.eq_ignore_ascii_case(m) || singular.eq_ignore_ascii_case(m))
}
