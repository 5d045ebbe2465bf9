//! What of MEMORY.md a bounded prompt shows, in three parts: the user's preferences (every
//! `## Proactivity preferences` section), the open items due soon (overdue by at most a day,
//! or due within a week), and the other lines ranked by how relevant they are to now.
//!
//! Relevance, highest first: a date close to now (within a month, the closer the higher),
//! words shared with what is going on (the recent conversation and attention), and, between
//! equals, a later line (notes are appended, so later is newer). Blank lines and headings
//! alone are never excerpts.

use crate::context::preferences::SECTION;
use crate::time::{find_dates_shared, DateOrder, FoundDate};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use std::collections::HashSet;
use std::sync::Arc;

/// How far around now an open item counts as due.
const DUE_PAST: Duration = Duration::days(1);
const DUE_AHEAD: Duration = Duration::days(7);
/// Dates further than this from now add nothing to a line's relevance.
const NEAR: i64 = 30;
/// Words shorter than this are not matched (articles, pronouns).
const MIN_WORD: usize = 4;

/// MEMORY.md split into the parts a bounded prompt shows.
pub struct MemoryParts<'a> {
    pub lines: Vec<&'a str>,
    /// Indices of the lines of the preferences sections, their headings included.
    pub preferences: Vec<usize>,
    /// Indices of the open items due soon, soonest first.
    pub due: Vec<usize>,
    /// Indices of every other non-blank line, most relevant first.
    pub relevant: Vec<usize>,
}

impl<'a> MemoryParts<'a> {
    /// `recent`: the text of what is going on now, whose words make a line relevant.
    pub fn of(memory: &'a Arc<str>, now: DateTime<Utc>, tz: Tz, order: DateOrder, recent: &str) -> Self {
        let lines: Vec<&str> = memory.lines().collect();
        let found = find_dates_shared(memory, now, tz, order);
        let preferences = preference_lines(&lines);
        let due = due_lines(&found, now);
        let mut taken: HashSet<usize> = preferences.iter().chain(&due).copied().collect();
        taken.extend(lines.iter().enumerate().filter(|(_, l)| is_blank_or_heading(l)).map(|(i, _)| i));
        let relevant = ranked(&lines, &found, &taken, now, recent);
        MemoryParts { lines, preferences, due, relevant }
    }

    pub fn text(&self, indices: &[usize]) -> Vec<&'a str> {
        indices.iter().map(|&i| self.lines[i]).collect()
    }
}

fn is_blank_or_heading(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The lines of every `## Proactivity preferences` section, up to the next heading of its
/// level or above.
fn preference_lines(lines: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut inside = false;
    for (i, line) in lines.iter().enumerate() {
        if let Some(title) = line.strip_prefix("## ") {
            inside = title.trim().eq_ignore_ascii_case(SECTION);
        } else if line.starts_with("# ") {
            inside = false;
        }
        if inside {
            out.push(i);
        }
    }
    out
}

/// The open items due from a day ago to a week ahead, soonest first (a line once).
fn due_lines(found: &[FoundDate], now: DateTime<Utc>) -> Vec<usize> {
    let mut due: Vec<&FoundDate> =
        found.iter().filter(|f| !f.done && f.at >= now - DUE_PAST && f.at <= now + DUE_AHEAD).collect();
    due.sort_by_key(|f| f.at);
    let mut seen = HashSet::new();
    due.into_iter().map(|f| f.line - 1).filter(|i| seen.insert(*i)).collect()
}

/// Every line not `taken`, most relevant first.
fn ranked(lines: &[&str], found: &[FoundDate], taken: &HashSet<usize>, now: DateTime<Utc>, recent: &str) -> Vec<usize> {
    let words = words_of(recent);
    let mut score = vec![0u32; lines.len()];
    for f in found {
        let days = (f.at - now).num_days().abs();
        if days <= NEAR && !f.done {
            score[f.line - 1] += 100 + (NEAR - days) as u32 * 10;
        }
    }
    let mut buf = String::new();
    let mut out: Vec<usize> = (0..lines.len()).filter(|i| !taken.contains(i)).collect();
    for &i in &out {
        score[i] += 20 * shared_words(lines[i], &words, &mut buf).min(5);
    }
    // Stable on equal scores by the later line first.
    out.sort_by(|&a, &b| score[b].cmp(&score[a]).then(b.cmp(&a)));
    out
}

/// The distinct lowercase words of `text` worth matching.
fn words_of(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= MIN_WORD).map(str::to_lowercase).collect()
}

/// How many distinct words of `line` are in `words` (`buf`: a reused lowercase copy).
fn shared_words(line: &str, words: &HashSet<String>, buf: &mut String) -> u32 {
    if words.is_empty() {
        return 0;
    }
    let mut seen = 0;
    let mut counted: Vec<&str> = Vec::new();
    for w in line.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= MIN_WORD) {
        buf.clear();
        buf.extend(w.chars().flat_map(char::to_lowercase));
        if words.contains(buf.as_str()) && !counted.contains(&w) {
            counted.push(w);
            seen += 1;
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn preferences_due_items_and_relevance_are_told_apart() {
        let memory: Arc<str> = "\
# Notes
- likes tea
## Proactivity preferences
- max 3 nudges a day
## Errands
- [ ] taxes due: 2026-03-03 17:00
- [ ] passport due: 2026-06-01
- [x] flights due: 2026-03-02
- the garden needs water
- dentist on 2026-03-20
"
        .into();
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let p = MemoryParts::of(&memory, now, chrono_tz::UTC, DateOrder::MonthFirst, "is the garden dry?");
        assert_eq!(p.text(&p.preferences), ["## Proactivity preferences", "- max 3 nudges a day"]);
        assert_eq!(p.text(&p.due), ["- [ ] taxes due: 2026-03-03 17:00"]);
        let relevant = p.text(&p.relevant);
        assert_eq!(relevant[0], "- dentist on 2026-03-20", "a near date first: {relevant:?}");
        assert_eq!(relevant[1], "- the garden needs water", "then the words of now: {relevant:?}");
        assert_eq!(relevant.len(), 5, "no heading, no blank line, nothing twice: {relevant:?}");
    }
}
