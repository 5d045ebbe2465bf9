//! Chinese time words, read as the words the time parser already knows, so one parser reads
//! both: a text with Chinese in it is cut into pieces (Chinese is written without spaces), and
//! each piece that says a time stands for the English words of the same meaning.
//!
//! | Written                          | Read as                         |
//! |----------------------------------|---------------------------------|
//! | `今天` `明天` `后天`             | `today`, `tomorrow`, `day after tomorrow` |
//! | `今晚` `明晚` / `今早` `明早`    | that day at 20:00 / 08:00 (or at the hour written after it) |
//! | `周三` `星期三` `礼拜天`         | `wednesday`, `sunday`           |
//! | `下周三` / `本周五` `这周五`     | `wednesday next week` / `friday this week` |
//! | `上午10点半` `下午3点` `晚上8点` | `10:30`, `15:00`, `20:00`       |
//! | `3点` `3点15分` `15时`           | `03:00`, `03:15`, `15:00`       |
//! | `12月20日` `十二月二十日` `2026年12月20日` | `dec 20`, `dec 20 2026` |
//! | `20号` `20日`                    | `the 20`                        |
//! | `3小时后` `半小时后` `2天后`     | `in 180 minutes`, `in 30 minutes`, `in 2 days` |
//! | `每天` `每月` `工作日`           | `every day`, `every month`, `every weekday` |
//! | `每周二` `每周一三五`            | `every tuesday`, `every monday wednesday friday` |
//! | `隔周一` `隔周周一` `每两周周一` `每隔一周周一` `双周周一` | `every other monday` |
//! | `从3月2日起` `3月2日开始`        | `from mar 2` (the start of a recurrence) |
//! | `截止` / `周五前` `下午3点之前`  | `due` / `friday due`, `15:00 due` (a deadline) |
//!
//! A part of the day said without an hour is at its usual one: `早上` 08:00, `上午` 09:00, `中午`
//! 12:00, `下午` 15:00, `傍晚` 18:00, `晚上` 20:00. `下周三` is the Wednesday of next week (said on a
//! Monday, 9 days on), not the first Wednesday ahead as `next wednesday` is.
//!
//! A day of the week's number before `次` is a count, not a day: `每周一次` (once a week) and
//! `每两周一次` (once every two weeks) say no day.
//!
//! Spaces may stand inside a number form (`每月 20 号`, `下午 3 点`). A text with no Chinese
//! character is cut at its spaces only.

mod forms;
#[cfg(test)]
mod tests;

use forms::matched;
use std::borrow::Cow;

/// One piece of a text: as written, where it starts, the words it stands for, and whether it
/// follows the piece before it with no space between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece<'a> {
    pub raw: &'a str,
    pub start: usize,
    pub words: Vec<Cow<'a, str>>,
    pub glued: bool,
}

/// Whether `c` is a Chinese (or Japanese) character or full-width form.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c, '\u{2E80}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{FF00}'..='\u{FFEF}')
}

/// Whether `c` is a Chinese character (not a full-width letter or bracket).
pub(crate) fn is_ideograph(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

/// Punctuation written between Chinese words (`，` `；` `（` `）` `、` `。` and the like).
pub(crate) fn is_punctuation(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{303F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '“' | '”' | '‘' | '’')
        || matches!(c, '\u{FF3B}'..='\u{FF40}' | '\u{FF5B}'..='\u{FF65}')
}

/// The pieces of `input`, left to right.
pub(crate) fn pieces(input: &str) -> Vec<Piece<'_>> {
    if !input.chars().any(is_cjk) {
        return input
            .split_whitespace()
            .map(|w| Piece { raw: w, start: offset(input, w), words: vec![Cow::Borrowed(w)], glued: false })
            .collect();
    }
    let mut cut = Cutter { input, out: Vec::new(), text: None, glued: false };
    let mut at = 0;
    while let Some(c) = input[at..].chars().next() {
        if c.is_whitespace() {
            cut.flush(at);
            cut.glued = false;
            at += c.len_utf8();
        } else if let Some((len, words)) = matched(&input[at..]) {
            cut.flush(at);
            cut.push(at, at + len, words.into_iter().map(Cow::Owned).collect());
            at += len;
        } else if is_punctuation(c) {
            cut.flush(at);
            cut.push(at, at + c.len_utf8(), vec![Cow::Borrowed(&input[at..at + c.len_utf8()])]);
            at += c.len_utf8();
        } else if is_cjk(c) {
            cut.text.get_or_insert(at);
            at += c.len_utf8();
        } else {
            cut.flush(at);
            let len = input[at..].find(|c: char| c.is_whitespace() || is_cjk(c) || is_punctuation(c));
            let end = len.map_or(input.len(), |len| at + len);
            cut.push(at, end, vec![Cow::Borrowed(&input[at..end])]);
            at = end;
        }
    }
    cut.flush(input.len());
    cut.out
}

fn offset(input: &str, word: &str) -> usize {
    word.as_ptr() as usize - input.as_ptr() as usize
}

/// Collects the pieces, and the run of other Chinese text not yet closed.
struct Cutter<'a> {
    input: &'a str,
    out: Vec<Piece<'a>>,
    text: Option<usize>,
    glued: bool,
}

impl<'a> Cutter<'a> {
    fn push(&mut self, start: usize, end: usize, words: Vec<Cow<'a, str>>) {
        let raw = &self.input[start..end];
        self.out.push(Piece { raw, start, words, glued: self.glued });
        self.glued = true;
    }

    /// Closes the run of text that ends at `end`.
    fn flush(&mut self, end: usize) {
        if let Some(start) = self.text.take() {
            self.push(start, end, vec![Cow::Borrowed(&self.input[start..end])]);
        }
    }
}
