//! Filling a prompt part by part within a token allowance: each part is kept whole when it
//! fits, else cut at a line (its first lines, or its newest ones), and a part that cannot
//! show even one line is left out; the prompt says which parts were cut.

use super::count::TokenCounter;
use std::fmt::Write;

/// Which lines of a part that does not fit are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// From the top (a list in order of importance).
    First,
    /// From the bottom (a log: its newest lines), shown in their order.
    Last,
}

/// The note a cut part ends with, and what it costs at most.
const CUT_NOTE: &str = "(cut to fit the prompt budget)";
const CUT_NOTE_TOKENS: usize = 12;

pub struct Fitter {
    counter: TokenCounter,
    left: usize,
    out: String,
}

impl Fitter {
    pub fn new(counter: TokenCounter, allowance: usize) -> Self {
        Fitter { counter, left: allowance, out: String::with_capacity(allowance.min(1 << 16) * 4) }
    }

    /// Tokens still free.
    pub fn left(&self) -> usize {
        self.left
    }

    /// `text` as is, when it fits whole; `false` when it did not (nothing is added).
    pub fn whole(&mut self, text: &str) -> bool {
        let cost = self.counter.count(text);
        if cost > self.left {
            return false;
        }
        self.left -= cost;
        self.out.push_str(text);
        true
    }

    /// `# title` and as many of `lines` as fit, by `keep`; left out when no line fits.
    pub fn part<'a>(&mut self, title: &str, lines: impl IntoIterator<Item = &'a str>, keep: Keep) {
        let lines: Vec<&str> = lines.into_iter().filter(|l| !l.trim().is_empty()).collect();
        let indices: Vec<usize> = (0..lines.len()).collect();
        self.ranked(title, &lines, &indices, keep == Keep::Last);
    }

    /// `# title` (none when empty) and the lines of `lines` taken in the order of `rank` (most
    /// wanted first) while they fit, shown in their own order; `reverse` ranks from the end.
    pub fn ranked(&mut self, title: &str, lines: &[&str], rank: &[usize], reverse: bool) {
        let heading = if title.is_empty() { String::new() } else { format!("# {title}\n") };
        let fixed = self.counter.count(&heading) + 1;
        if lines.is_empty() || fixed + CUT_NOTE_TOKENS >= self.left {
            return;
        }
        let mut room = self.left - fixed - CUT_NOTE_TOKENS;
        let mut kept = Vec::new();
        let order: Box<dyn Iterator<Item = &usize>> =
            if reverse { Box::new(rank.iter().rev()) } else { Box::new(rank.iter()) };
        for &i in order {
            let cost = self.counter.count(lines[i]) + 1;
            if cost > room {
                // A log or a ranked list: a line further on that would fit is less wanted.
                break;
            }
            room -= cost;
            kept.push(i);
        }
        if kept.is_empty() {
            return;
        }
        let cut = kept.len() < lines.len();
        kept.sort_unstable();
        self.out.push_str(&heading);
        for i in kept {
            let _ = writeln!(self.out, "{}", lines[i]);
        }
        if cut {
            let _ = writeln!(self.out, "{CUT_NOTE}");
        }
        if !title.is_empty() {
            self.out.push('\n');
        }
        self.left = room + if cut { 0 } else { CUT_NOTE_TOKENS };
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_kept_whole_cut_at_a_line_or_left_out() {
        let mut f = Fitter::new(TokenCounter::Approx, 60);
        f.part("Log", ["old line one", "old line two", "newest line"], Keep::Last);
        assert!(f.left() < 60);
        let log: Vec<String> = (0..100).map(|i| format!("entry number {i}")).collect();
        f.part("Long", log.iter().map(String::as_str), Keep::Last);
        f.part("Nothing fits", ["x"], Keep::First);
        let out = f.finish();
        assert!(out.starts_with("# Log\nold line one\nold line two\nnewest line\n"), "{out}");
        assert!(out.contains("entry number 99\n") && !out.contains("entry number 0\n"), "the newest: {out}");
        assert!(out.contains(CUT_NOTE) && !out.contains("Nothing fits"), "{out}");
        assert!(TokenCounter::Approx.count(&out) <= 60, "{} tokens: {out}", TokenCounter::Approx.count(&out));
    }
}
