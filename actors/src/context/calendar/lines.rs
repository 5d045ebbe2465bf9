//! Content lines with their line numbers: unfolds RFC 5545 continuation lines, checks the
//! file's shape (a `VCALENDAR` at the top, `BEGIN`/`END` paired, every line `NAME[;PARAMS]:VALUE`)
//! and remembers, for every component in document order, the file line of its `BEGIN` and of
//! each of its properties, so an error found later in the parsed tree can name its line.
//! The `icalendar` parser only knows offsets in the unfolded text, so lines are counted here.

use crate::context::calendar::Bad;

/// Where one component's lines are in the file (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ComponentLines {
    pub(super) begin: usize,
    /// One per property, in the order written (the order the parser keeps).
    pub(super) props: Vec<usize>,
}

impl ComponentLines {
    /// The line of the component's `index`th property (its `BEGIN` line if there is none).
    pub(super) fn prop(&self, index: usize) -> usize {
        self.props.get(index).copied().unwrap_or(self.begin)
    }
}

/// A file unfolded and checked, ready for the `icalendar` parser.
#[derive(Debug)]
pub(super) struct Scanned {
    /// One content line per line, `\n`-separated, `BEGIN`/`END` names upper-cased.
    pub(super) unfolded: String,
    /// The file line each content line of `unfolded` starts on.
    starts: Vec<usize>,
    /// Every component, in the order of their `BEGIN` lines (the parse tree's pre-order).
    pub(super) components: Vec<ComponentLines>,
}

impl Scanned {
    /// The file line holding byte `offset` of `unfolded`.
    pub(super) fn line_at(&self, offset: usize) -> usize {
        let offset = offset.min(self.unfolded.len());
        let index = self.unfolded.as_bytes()[..offset].iter().filter(|b| **b == b'\n').count();
        self.starts.get(index).or(self.starts.last()).copied().unwrap_or(1)
    }
}

/// Unfolds `text` and checks its shape; the error names the first offending line.
pub(super) fn scan(text: &str) -> Result<Scanned, Bad> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut logical: Vec<(usize, String)> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(rest) = raw.strip_prefix([' ', '\t']) {
            match logical.last_mut() {
                Some((_, line)) => line.push_str(rest),
                None => return Err(Bad::new(i + 1, "not an iCalendar file: starts with a continuation line")),
            }
        } else if !raw.is_empty() {
            logical.push((i + 1, raw.to_owned()));
        }
    }
    if logical.is_empty() {
        return Err(Bad::new(1, "not an iCalendar file: it is empty"));
    }

    let mut scanned = Scanned { unfolded: String::new(), starts: Vec::new(), components: Vec::new() };
    // Open components: name, BEGIN line, index in `components`.
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    for (n, line) in logical {
        let (name, value) =
            split(&line).ok_or_else(|| Bad::new(n, format!("expected NAME:value, found {:?}", short(&line))))?;
        if name.eq_ignore_ascii_case("BEGIN") {
            let component = component_name(value, n)?;
            if open.is_empty() && component != "VCALENDAR" {
                return Err(Bad::new(
                    n,
                    format!("not an iCalendar file: BEGIN:{component} where BEGIN:VCALENDAR was expected"),
                ));
            }
            open.push((component.clone(), n, scanned.components.len()));
            scanned.components.push(ComponentLines { begin: n, props: Vec::new() });
            scanned.push(n, &format!("BEGIN:{component}"));
        } else if name.eq_ignore_ascii_case("END") {
            let component = component_name(value, n)?;
            match open.pop() {
                Some((opened, _, _)) if opened == component => {}
                Some((opened, at, _)) => {
                    return Err(Bad::new(n, format!("END:{component} where END:{opened} (for line {at}) was expected")))
                }
                None => return Err(Bad::new(n, format!("END:{component} without its BEGIN"))),
            }
            scanned.push(n, &format!("END:{component}"));
        } else {
            let Some((_, _, index)) = open.last() else {
                return Err(Bad::new(n, "not an iCalendar file: content outside BEGIN:VCALENDAR ... END:VCALENDAR"));
            };
            scanned.components[*index].props.push(n);
            scanned.push(n, &line);
        }
    }
    if let Some((component, at, _)) = open.pop() {
        return Err(Bad::new(at, format!("BEGIN:{component} is never closed by END:{component}")));
    }
    Ok(scanned)
}

impl Scanned {
    fn push(&mut self, line: usize, text: &str) {
        self.unfolded.push_str(text);
        self.unfolded.push('\n');
        self.starts.push(line);
    }
}

/// A content line's name and value: `NAME[;PARAM=...]:VALUE`, a `:` inside a quoted parameter
/// value not counting.
fn split(line: &str) -> Option<(&str, &str)> {
    let name_len = line.find(|c: char| !is_name_char(c)).unwrap_or(line.len());
    if name_len == 0 {
        return None;
    }
    let mut quoted = false;
    for (i, c) in line.char_indices().skip(name_len) {
        match c {
            '"' => quoted = !quoted,
            ':' if !quoted => return Some((&line[..name_len], &line[i + 1..])),
            _ if i == name_len && c != ';' => return None,
            _ => {}
        }
    }
    None
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

/// The upper-cased component name of a `BEGIN:` or `END:` line.
fn component_name(value: &str, line: usize) -> Result<String, Bad> {
    let name = value.trim();
    if name.is_empty() || !name.chars().all(is_name_char) {
        return Err(Bad::new(line, format!("{:?} is not a component name", short(name))));
    }
    Ok(name.to_ascii_uppercase())
}

/// At most 40 characters of `text`, for an error message.
fn short(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}
