//! The shape of one line of notes, read before its dates: a list bullet (`-`, `*`, `+`, `1.`),
//! a checkbox (`[ ]` open, `[x]` or `[X]` done), a strike-through of the whole content
//! (`~~...~~`: done), the importance markers (`!high`, `!medium`, `!low`) and the words left.
//!
//! Each word keeps its core: the word without the punctuation around it (`(due` → `due`,
//! `9am:` → `9am`, `2026-04-01)` → `2026-04-01`). A `.` is not trimmed: it belongs to `15.05.`.
//! The title is what is left of the written words once the date phrase and the markers are
//! taken out.

use super::super::zh::Piece;
use super::Importance;

/// Punctuation trimmed from the start of a word.
const LEADING: &[char] = &['(', '[', '{', '"', '\'', '*', '_', '~', '<', ',', ':', ';', '“', '‘', '«'];
/// Punctuation trimmed from the end of a word.
const TRAILING: &[char] = &[')', ']', '}', '"', '\'', '*', '_', '~', '>', ',', ':', ';', '!', '?', '”', '’', '»'];
/// What is trimmed from the ends of a title once the date is out of it.
const TITLE_EDGE: &[char] = &[',', ';', ':', '-', '–', '—', '|', '(', '@', '/'];

/// One line of notes, split into words.
pub(super) struct Line<'a> {
    /// A checkbox opens the line (`- [ ]`, `* [x]`, `[ ]`).
    pub checkbox: bool,
    /// Checked (`[x]`) or the whole content struck through.
    pub done: bool,
    /// The whole content is struck through.
    struck: bool,
    pub importance: Importance,
    /// The words as written (a Chinese piece that stands for several words is written once, at
    /// its first).
    pub raw: Vec<&'a str>,
    /// Each word follows the one before it with no space between (Chinese).
    glued: Vec<bool>,
    /// Each word without the punctuation around it.
    pub core: Vec<&'a str>,
    /// The words that are not title: the markers now, the date phrase once it is found.
    pub used: Vec<bool>,
}

impl<'a> Line<'a> {
    /// The line whose content (after [`content`]) was cut into `pieces`.
    pub fn read(checkbox: bool, checked: bool, pieces: &'a [Piece<'_>]) -> Line<'a> {
        let (mut raw, mut glued, mut core_of) = (Vec::new(), Vec::new(), Vec::new());
        for piece in pieces {
            for (k, word) in piece.words.iter().enumerate() {
                raw.push(if k == 0 { piece.raw } else { "" });
                glued.push(k > 0 || piece.glued);
                core_of.push(core(word));
            }
        }
        let core: Vec<&str> = core_of;
        let used: Vec<bool> = core.iter().map(|w| marker(w).is_some()).collect();
        let importance = importance(&core);
        let struck = wholly_struck(&raw, &used);
        Line { checkbox, done: checked || struck, struck, importance, raw, glued, core, used }
    }

    /// Marks the words `start..end` as part of the date.
    pub fn take(&mut self, start: usize, end: usize) {
        for used in self.used.iter_mut().take(end).skip(start) {
            *used = true;
        }
    }

    /// Whether a word (its core) is one of `names`, in any case.
    pub fn has_word(&self, names: &[&str]) -> bool {
        self.core.iter().any(|w| is_one_of(w, names))
    }

    /// The words not taken, and whether they were struck through as a whole (`~~Dentist~~`).
    pub fn title(&self) -> (String, bool) {
        let mut joined = String::new();
        for i in (0..self.raw.len()).filter(|&i| self.in_title(i) && !self.raw[i].is_empty()) {
            if !joined.is_empty() && !self.glued[i] {
                joined.push(' ');
            }
            joined.push_str(self.raw[i]);
        }
        let title = joined.trim_matches(|c: char| c.is_whitespace() || TITLE_EDGE.contains(&c));
        let struck = title.starts_with("~~") && title.ends_with("~~") && title.matches("~~").count() == 2;
        let title = if struck || self.struck { title.trim_matches(['~', ' ']) } else { title };
        (balance_parentheses(title), struck)
    }

    /// Not taken, and not a dash or bar left beside the date (`Meeting — May 15`).
    fn in_title(&self, i: usize) -> bool {
        let stray = is_punctuation(self.raw[i]) && self.next_to_used(i);
        !self.used[i] && !stray
    }

    fn next_to_used(&self, i: usize) -> bool {
        let before = i.checked_sub(1).is_some_and(|b| self.used[b]);
        let after = self.used.get(i + 1).copied().unwrap_or(false);
        before || after
    }
}

/// A word without the punctuation around it.
pub(super) fn core(word: &str) -> &str {
    word.trim_start_matches(LEADING).trim_end_matches(TRAILING)
}

/// Whether `word` is one of `names`, in any case.
pub(super) fn is_one_of(word: &str, names: &[&str]) -> bool {
    names.iter().any(|n| word.eq_ignore_ascii_case(n))
}

/// The content of a line: its checkbox (whether it has one, whether it is checked) and the words
/// after the list bullet and the checkbox.
pub(super) fn content(text: &str) -> (bool, bool, &str) {
    strip_checkbox(strip_bullet(text.trim()))
}

/// `- `, `* `, `+ ` or `1. ` / `1) ` at the start of a line.
fn strip_bullet(text: &str) -> &str {
    let mut chars = text.chars();
    if let (Some('-' | '*' | '+'), Some(c)) = (chars.next(), chars.next()) {
        if c.is_whitespace() {
            return text[1..].trim_start();
        }
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=3).contains(&digits) {
        return text;
    }
    let after = &text[digits..];
    match after.strip_prefix('.').or_else(|| after.strip_prefix(')')) {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => text,
    }
}

/// `[ ]`, `[x]` or `[X]` at the start: (a checkbox, checked, the rest).
fn strip_checkbox(text: &str) -> (bool, bool, &str) {
    let checked = match text.get(..3) {
        Some("[ ]") => false,
        Some("[x]" | "[X]") => true,
        _ => return (false, false, text),
    };
    let rest = &text[3..];
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        (true, checked, rest.trim_start())
    } else {
        (false, false, text)
    }
}

/// The written words (markers aside) open with `~~` and close with `~~`, with none between.
fn wholly_struck(raw: &[&str], markers: &[bool]) -> bool {
    let written =
        || raw.iter().zip(markers).filter(|(word, marker)| !**marker && !word.is_empty()).map(|(word, _)| *word);
    let (Some(first), Some(last)) = (written().next(), written().next_back()) else {
        return false;
    };
    if !first.starts_with("~~") || !last.ends_with("~~") {
        return false;
    }
    let tildes: usize = written().map(|word| word.matches("~~").count()).sum();
    let length: usize = written().map(str::len).sum();
    tildes == 2 && length > 4
}

/// `!high`, `!medium` or `!low`, in any case.
fn marker(word: &str) -> Option<Importance> {
    if word.eq_ignore_ascii_case("!high") {
        Some(Importance::High)
    } else if word.eq_ignore_ascii_case("!medium") {
        Some(Importance::Medium)
    } else if word.eq_ignore_ascii_case("!low") {
        Some(Importance::Low)
    } else {
        None
    }
}

/// `!high` wins over `!low`; no marker is medium.
fn importance(words: &[&str]) -> Importance {
    let marked = |importance: Importance| words.iter().any(|w| marker(w) == Some(importance));
    if marked(Importance::High) {
        Importance::High
    } else if marked(Importance::Low) {
        Importance::Low
    } else {
        Importance::Medium
    }
}

/// The title with the parentheses the date took half of made whole again: `Dentist (yes, May 15)`
/// → `Dentist (yes)`, `Meeting (May 15 with Ann)` → `Meeting with Ann`.
fn balance_parentheses(title: &str) -> String {
    let mut out = String::with_capacity(title.len() + 1);
    let mut open = 0usize;
    for c in title.chars() {
        match c {
            '(' => open += 1,
            ')' if open == 0 => continue,
            ')' => open -= 1,
            _ => {}
        }
        out.push(c);
    }
    out.extend(std::iter::repeat_n(')', open));
    out
}

/// A word with no letter and no digit (`-`, `—`, `@`, `|`).
fn is_punctuation(word: &str) -> bool {
    !word.chars().any(char::is_alphanumeric)
}
