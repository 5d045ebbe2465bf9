//! attention.md as H2 sections. Splicing replaces one section's text and leaves every other
//! byte of the file as it was, so a user's own sections survive every update.

/// The text of the file split at `## ` headings: the preamble, then `(title, chunk)` where a
/// chunk is the heading line and everything up to the next heading.
pub fn split(text: &str) -> (String, Vec<(String, String)>) {
    let mut preamble = String::new();
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(title) = line.strip_prefix("## ") {
            sections.push((title.trim().to_owned(), line.to_owned()));
        } else if let Some((_, chunk)) = sections.last_mut() {
            chunk.push_str(line);
        } else {
            preamble.push_str(line);
        }
    }
    (preamble, sections)
}

/// The chunk a producer's body becomes: heading, body, one blank line.
pub fn chunk(title: &str, body: &str) -> String {
    format!("## {title}\n{}\n\n", body.trim_end())
}

/// `text` with section `title` set to `body` (appended when absent).
pub fn splice(text: &str, title: &str, body: &str) -> String {
    let (mut preamble, mut sections) = split(text);
    let new = chunk(title, body);
    match sections.iter_mut().find(|(t, _)| t == title) {
        Some((_, c)) => *c = new,
        None => {
            // Only what the new section follows is set apart from it: the preamble just when
            // there is no section before it.
            match sections.last_mut() {
                Some((_, last)) => end_with_blank_line(last),
                None if !preamble.is_empty() => end_with_blank_line(&mut preamble),
                None => {}
            }
            sections.push((title.to_owned(), new));
        }
    }
    let mut out = preamble;
    for (_, c) in sections {
        out.push_str(&c);
    }
    out
}

fn end_with_blank_line(text: &mut String) {
    if !text.ends_with("\n\n") {
        text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
    }
}

/// The named sections, in file order, as one markdown block.
pub fn select(text: &str, titles: &[String]) -> String {
    let (_, sections) = split(text);
    sections
        .into_iter()
        .filter(|(t, _)| titles.iter().any(|w| w == t))
        .map(|(_, c)| c.trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_only_its_section() {
        let text = "# Attention\n\n## Mine\nhand written\n  keep this\n\n## Routines\nold\n\n## Also mine\nx\n";
        let out = splice(text, "Routines", "- new");
        assert_eq!(out, "# Attention\n\n## Mine\nhand written\n  keep this\n\n## Routines\n- new\n\n## Also mine\nx\n");
        assert_eq!(splice(&out, "Routines", "- new"), out, "idempotent");
        let added = splice(&out, "Today's plan", "- 09:00");
        assert!(added.starts_with(&out));
        assert!(added.ends_with("x\n\n## Today's plan\n- 09:00\n\n"));
    }

    #[test]
    fn select_picks_named_sections() {
        let text = "## A\na\n\n## B\nb\n\n## C\nc\n";
        assert_eq!(select(text, &["C".into(), "A".into()]), "## A\na\n\n## C\nc");
    }
}
