//! attention.md as H2 sections, read as CommonMark.
//!
//! **What a section is.** Only a *top-level* heading delimits a section: an ATX heading
//! (`## Title`, up to three spaces before the `##`, an optional closing run of `#`) or a setext
//! heading (`Title` over a `---` line) that is not inside anything else. A `## ` line inside a
//! fenced code block (``` or ~~~), an indented code block, an HTML block, a block quote or a
//! list is text, not a heading. A level-2 heading opens a section; the section runs from the
//! first byte of its heading line (its indentation included) to the first byte of the next
//! top-level heading of level 1 or 2, or to the end of the file. Its title is the heading's
//! text content, trimmed (`## *Routines*` is titled `Routines`).
//!
//! **Splicing.** [`splice`] replaces one section, the first one whose title matches (a second
//! section of the same title is left as it is), and keeps every other byte of the file as it
//! was: line endings, a missing final newline, the user's own sections. A missing section is
//! appended at the end, set apart by a blank line; when the file ends inside a code fence left
//! open, the separator closes that fence first, since otherwise the new section would be code.
//! Splicing the same body twice gives the same text.
//!
//! **A body cannot reach outside its section.** A producer's body is written as it is
//! ([`chunk`]) unless it would hold a heading of level 1 or 2 of its own or leave a fence or
//! HTML block open; such a body is written as an indented code block instead ([`code_chunk`]:
//! each line four spaces in, its text kept, none of it read as Markdown). The code form is also
//! used when the heading after the section is indented far enough (two or three spaces) to be
//! taken into a list the body ends with. [`splice`] checks what it wrote: every other heading
//! must be where it was, or the file is left alone and the splice fails.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag};
use std::ops::Range;

/// One H2 section: its title and the bytes it spans, heading line included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub span: Range<usize>,
}

/// Why a section could not be written without changing the rest of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    /// The title holds Markdown (emphasis, a closing `#`, a line break...), so `## {title}`
    /// would not read back as it and the section could never be found again.
    #[error("section title {0:?} is not plain text: its heading would not read back as it")]
    TitleNotPlain(String),
    /// Writing the section would move or change another heading: the file ends inside a block
    /// that runs on (an HTML comment left open, say), so nothing appended after it is a heading.
    #[error("section {0:?} cannot be written without changing other sections of attention.md (is an HTML block left open at its end?)")]
    WouldDisturb(String),
}

/// A top-level heading of level 1 or 2: where its line starts, its level, its title.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Heading {
    start: usize,
    level: HeadingLevel,
    title: String,
}

/// A heading put after a chunk or a file to see whether it still reads as one.
const PROBE: &str = "## probe\n";

/// The H2 sections of `text`, in file order.
pub fn find(text: &str) -> Vec<Section> {
    let headings = headings(text);
    let ends = headings.iter().skip(1).map(|h| h.start).chain([text.len()]);
    headings
        .iter()
        .zip(ends)
        .filter(|(h, _)| h.level == HeadingLevel::H2)
        .map(|(h, end)| Section { title: h.title.clone(), span: h.start..end })
        .collect()
}

/// The named sections, in file order, as one markdown block.
pub fn select(text: &str, titles: &[String]) -> String {
    find(text)
        .into_iter()
        .filter(|s| titles.contains(&s.title))
        .filter_map(|s| text.get(s.span).map(str::trim_end))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The text a producer's section becomes: heading, body, one blank line. The body is written as
/// an indented code block ([`code_chunk`]) when, as it is, it would reach outside its section.
pub fn chunk(title: &str, body: &str) -> String {
    let plain = written(title, body.trim_end());
    if stays_inside(&plain, title) {
        plain
    } else {
        code_chunk(title, body)
    }
}

/// The section with its body as an indented code block, which nothing after it can join.
pub fn code_chunk(title: &str, body: &str) -> String {
    written(title, &as_code(body.trim_end()))
}

/// `text` with section `title` set to `body` (appended when absent); every byte outside that
/// section is kept.
pub fn splice(text: &str, title: &str, body: &str) -> Result<String, SpliceError> {
    if !reads_back(title) {
        return Err(SpliceError::TitleNotPlain(title.to_owned()));
    }
    let before = headings(text);
    let span = own_section(text, &before, title);
    let sep = if span.is_none() { separator(text) } else { String::new() };
    let (plain, code) = (chunk(title, body), code_chunk(title, body));
    let forms = if plain == code { vec![plain] } else { vec![plain, code] };
    forms
        .iter()
        .find_map(|chunk| {
            let (out, at, removed) = match &span {
                Some(span) => (replaced(text, span, chunk), span.start, span.len()),
                None => (format!("{text}{sep}{chunk}"), text.len() + sep.len(), 0),
            };
            let want = expected(&before, at, removed, chunk.len(), title);
            (headings(&out) == want).then_some(out)
        })
        .ok_or_else(|| SpliceError::WouldDisturb(title.to_owned()))
}

/// Every top-level heading of level 1 or 2 in `text`.
fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut open: Option<Heading> = None;
    for (depth, event, range) in events(text) {
        match (depth, event) {
            (0, Event::Start(tag)) => {
                open = top_level_heading(&tag).map(|level| Heading {
                    start: line_start(text, range.start),
                    level,
                    title: String::new(),
                })
            }
            (0, Event::End(_)) => out.extend(open.take().map(|h| Heading { title: h.title.trim().to_owned(), ..h })),
            (_, Event::Text(t) | Event::Code(t)) => open.iter_mut().for_each(|h| h.title.push_str(&t)),
            (_, Event::SoftBreak | Event::HardBreak) => open.iter_mut().for_each(|h| h.title.push(' ')),
            _ => {}
        }
    }
    out
}

/// The parser's events with their byte ranges, each with how many blocks or inline spans
/// enclose it: a `Start` or `End` at depth 0 opens or closes a top-level block. Plain
/// CommonMark, no extensions, so `{#id}` or `$x$` in a title stays text.
fn events(text: &str) -> impl Iterator<Item = (usize, Event<'_>, Range<usize>)> {
    let mut depth = 0usize;
    Parser::new_ext(text, Options::empty()).into_offset_iter().map(move |(event, range)| {
        let at = match event {
            Event::Start(_) => {
                depth += 1;
                depth - 1
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                depth
            }
            _ => depth,
        };
        (at, event, range)
    })
}

fn top_level_heading(tag: &Tag) -> Option<HeadingLevel> {
    match tag {
        Tag::Heading { level, .. } if *level <= HeadingLevel::H2 => Some(*level),
        _ => None,
    }
}

/// Where the line holding byte `at` starts, given only indentation lies before it.
fn line_start(text: &str, at: usize) -> usize {
    let indent = text.as_bytes().get(..at).map_or(0, |b| b.iter().rev().take_while(|c| **c == b' ').count());
    at - indent
}

fn written(title: &str, body: &str) -> String {
    format!("## {title}\n{body}\n\n")
}

/// Whether `## {title}` reads back as a heading titled `title`.
fn reads_back(title: &str) -> bool {
    headings(&written(title, "")) == [Heading { start: 0, level: HeadingLevel::H2, title: title.to_owned() }]
}

/// Whether `chunk` holds one heading, its own, and ends every block it opens before a heading
/// that follows it.
fn stays_inside(chunk: &str, title: &str) -> bool {
    let probed = format!("{chunk}{PROBE}");
    let h2 = |start, title: &str| Heading { start, level: HeadingLevel::H2, title: title.to_owned() };
    headings(&probed) == [h2(0, title), h2(chunk.len(), "probe")]
}

/// `body` as an indented code block: every line with text four spaces in.
fn as_code(body: &str) -> String {
    lines(body).map(|l| if l.trim().is_empty() { l.to_owned() } else { format!("    {l}") }).collect()
}

/// The lines of `text` with their endings; `\n`, `\r\n` and a lone `\r` each end a line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).map_or(rest.len(), |i| i + ending_len(&rest[i..]));
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

fn ending_len(from: &str) -> usize {
    if from.starts_with("\r\n") {
        2
    } else {
        1
    }
}

/// The span of the first section titled `title`.
fn own_section(text: &str, headings: &[Heading], title: &str) -> Option<Range<usize>> {
    let i = headings.iter().position(|h| h.level == HeadingLevel::H2 && h.title == title)?;
    let end = headings.get(i + 1).map_or(text.len(), |h| h.start);
    Some(headings[i].start..end)
}

/// `text` with `span` replaced. Both ends are line starts or the end of the text, so they fall
/// on character boundaries.
fn replaced(text: &str, span: &Range<usize>, chunk: &str) -> String {
    format!("{}{chunk}{}", &text[..span.start], &text[span.end..])
}

/// The headings `splice` must leave: those before the section where they were, the section's
/// own at `at`, those after it moved by the change in length.
fn expected(before: &[Heading], at: usize, removed: usize, added: usize, title: &str) -> Vec<Heading> {
    let own = Heading { start: at, level: HeadingLevel::H2, title: title.to_owned() };
    let earlier = before.iter().filter(|h| h.start < at).cloned();
    let later = before.iter().filter(|h| h.start >= at + removed);
    earlier.chain([own]).chain(later.map(|h| Heading { start: h.start - removed + added, ..h.clone() })).collect()
}

/// What goes between the text and an appended section: a blank line, after a closing fence
/// when the text ends inside a fenced code block.
fn separator(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    // The shortest blank line first; "\n\n" as well, for a file ending in a lone `\r` that
    // the parser does not take for a line ending everywhere.
    let blank = [blank_line(text), "\n\n"].into_iter().find(|sep| heading_after(text, sep));
    match (blank, closing_fence(text)) {
        (Some(sep), _) => sep.to_owned(),
        (None, Some(fence)) => {
            let newline = if ends_with_line_ending(text) { "" } else { "\n" };
            format!("{newline}{fence}\n\n")
        }
        (None, None) => blank_line(text).to_owned(),
    }
}

/// Whether a heading put after `text` and `sep` reads as one.
fn heading_after(text: &str, sep: &str) -> bool {
    let probed = format!("{text}{sep}{PROBE}");
    headings(&probed).iter().any(|h| h.start == text.len() + sep.len())
}

fn blank_line(text: &str) -> &'static str {
    if ends_with_blank_line(text) {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        // No line ending, or a lone `\r` that a `\n` would join into one `\r\n`.
        "\n\n"
    }
}

fn ends_with_line_ending(text: &str) -> bool {
    text.ends_with(['\n', '\r'])
}

fn ends_with_blank_line(text: &str) -> bool {
    let cut = if text.ends_with("\r\n") { 2 } else { usize::from(ends_with_line_ending(text)) };
    cut > 0 && ends_with_line_ending(&text[..text.len() - cut])
}

/// The fence that closes a fenced code block running to the end of `text`.
fn closing_fence(text: &str) -> Option<String> {
    let start = last_top_level_fence(text)?;
    let opener = text.get(start..)?.trim_start_matches(' ');
    let mark = opener.chars().next().filter(|c| *c == '`' || *c == '~')?;
    Some(opener.chars().take_while(|c| *c == mark).collect())
}

/// Where the last top-level block starts, when it is a fenced code block running to the end
/// of `text`.
fn last_top_level_fence(text: &str) -> Option<usize> {
    let (_, event, range) = events(text).filter(|(depth, e, _)| *depth == 0 && matches!(e, Event::Start(_))).last()?;
    let fenced = matches!(event, Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))));
    (fenced && range.end == text.len()).then_some(range.start)
}

#[cfg(test)]
#[path = "sections_tests.rs"]
mod tests;
