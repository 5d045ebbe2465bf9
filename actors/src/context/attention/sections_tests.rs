use super::*;
use proptest::prelude::*;

fn ok(text: &str, title: &str, body: &str) -> String {
    let out = splice(text, title, body).unwrap();
    assert_eq!(splice(&out, title, body).unwrap(), out, "idempotent");
    out
}

fn titles(text: &str) -> Vec<String> {
    find(text).into_iter().map(|s| s.title).collect()
}

#[test]
fn splice_replaces_only_its_section() {
    let text = "# Attention\n\n## Mine\nhand written\n  keep this\n\n## Routines\nold\n\n## Also mine\nx\n";
    let out = ok(text, "Routines", "- new");
    assert_eq!(out, "# Attention\n\n## Mine\nhand written\n  keep this\n\n## Routines\n- new\n\n## Also mine\nx\n");
    let added = ok(&out, "Today's plan", "- 09:00");
    assert!(added.starts_with(&out));
    assert!(added.ends_with("x\n\n## Today's plan\n- 09:00\n\n"));
}

/// The reported case: a user's section quoting a `## Routines` line in a code fence.
const FENCED: &str = "## My notes\nHow the file looks:\n\n```markdown\n## Routines\n- made up\n```\n\nstill mine\n";

#[test]
fn a_heading_inside_a_fence_is_text_and_survives_byte_for_byte() {
    let text = format!("# Attention\n\n{FENCED}\n## Routines\nold\n\n## Also mine\nx\n");
    assert_eq!(titles(&text), ["My notes", "Routines", "Also mine"]);
    let out = ok(&text, "Routines", "- medication around 09:00");
    assert_eq!(out, format!("# Attention\n\n{FENCED}\n## Routines\n- medication around 09:00\n\n## Also mine\nx\n"));
    // No real Routines section: appended after the fence, the fence untouched.
    let text = format!("# Attention\n\n{FENCED}");
    let out = ok(&text, "Routines", "- new");
    assert_eq!(out, format!("{text}\n## Routines\n- new\n\n"));
}

#[test]
fn tilde_fences_and_indented_code_hide_headings() {
    let text = "## Mine\n~~~~\n## Routines\n~~~\nstill code\n~~~~\n\n    ## Routines\n    ## Today's plan\n\nafter\n";
    assert_eq!(titles(text), ["Mine"]);
    let out = ok(text, "Routines", "- a");
    assert_eq!(out, format!("{text}\n## Routines\n- a\n\n"));
}

#[test]
fn headings_inside_quotes_lists_and_html_are_not_sections() {
    let text = "> ## Routines\n\n- ## Routines\n\n<div>\n## Routines\n</div>\n\n### Routines\n";
    assert_eq!(titles(text), Vec::<String>::new());
    assert_eq!(ok(text, "Routines", "- a"), format!("{text}\n## Routines\n- a\n\n"));
}

#[test]
fn setext_and_indented_atx_headings_delimit_sections() {
    let text = "Routines\n--------\nold\n\nMine\n---\nx\n";
    assert_eq!(titles(text), ["Routines", "Mine"]);
    assert_eq!(ok(text, "Routines", "- a"), "## Routines\n- a\n\nMine\n---\nx\n");
    let text = "intro\n\n   ## Routines ##\nold\n  ## Mine\nx\n";
    assert_eq!(titles(text), ["Routines", "Mine"]);
    assert_eq!(ok(text, "Routines", "a"), "intro\n\n## Routines\na\n\n  ## Mine\nx\n");
}

#[test]
fn an_h1_ends_a_section_and_a_second_section_of_the_title_is_left_alone() {
    let text = "## Routines\nold\n# Other\nkept\n## Routines\nsecond\n";
    assert_eq!(find(text)[0].span, 0..16);
    assert_eq!(ok(text, "Routines", "- a"), "## Routines\n- a\n\n# Other\nkept\n## Routines\nsecond\n");
}

#[test]
fn a_crlf_file_keeps_its_line_endings() {
    let text =
        "# Attention\r\n\r\n## Mine\r\n```\r\n## Routines\r\n```\r\n\r\n## Routines\r\nold\r\n\r\n## Last\r\nx\r\n";
    let out = ok(text, "Routines", "- a");
    assert_eq!(
        out,
        "# Attention\r\n\r\n## Mine\r\n```\r\n## Routines\r\n```\r\n\r\n## Routines\n- a\n\n## Last\r\nx\r\n"
    );
    let mine = "## Mine\r\nx\r\n\r\n";
    assert_eq!(ok(mine, "Routines", "- a"), format!("{mine}## Routines\n- a\n\n"));
}

#[test]
fn a_file_without_a_final_newline_keeps_its_last_line() {
    let text = "## Routines\nold\n\n## Mine\nno newline";
    assert_eq!(ok(text, "Routines", "- a"), "## Routines\n- a\n\n## Mine\nno newline");
    assert_eq!(ok("## Mine\nx", "Routines", "- a"), "## Mine\nx\n\n## Routines\n- a\n\n");
    assert_eq!(ok("## Mine\nx\r", "Routines", "- a"), "## Mine\nx\r\n\n## Routines\n- a\n\n");
}

#[test]
fn a_fence_left_open_at_the_end_is_closed_before_appending() {
    let text = "## Mine\n````\n## Routines\n```\nnot closed";
    assert_eq!(ok(text, "Routines", "- a"), format!("{text}\n````\n\n## Routines\n- a\n\n"));
    let text = "## Mine\n  ~~~\ncode\n";
    assert_eq!(ok(text, "Routines", "- a"), format!("{text}~~~\n\n## Routines\n- a\n\n"));
}

#[test]
fn an_html_block_left_open_at_the_end_is_refused_not_swallowed() {
    let text = "## Mine\n<!-- never closed\n";
    assert_eq!(splice(text, "Routines", "- a"), Err(SpliceError::WouldDisturb("Routines".into())));
}

#[test]
fn a_body_that_would_reach_outside_its_section_is_written_as_code() {
    let text = "## Routines\nold\n\n  ## Mine\nx\n";
    for body in ["- a\n## Mine", "```\nnever closed", "Title\n===", "- a", "<!--", "a\r## b"] {
        let out = ok(text, "Routines", body);
        assert_eq!(titles(&out), ["Routines", "Mine"], "{body:?}: {out:?}");
        assert!(out.ends_with("\n\n  ## Mine\nx\n"), "{body:?}: {out:?}");
    }
    assert_eq!(chunk("R", "- a\n## Mine"), "## R\n    - a\n    ## Mine\n\n");
    assert_eq!(chunk("R", "a\n\n### sub"), "## R\na\n\n### sub\n\n", "an H3 is the body's own");
    // A list is written as it is, unless the heading after it is indented enough to join it.
    assert_eq!(chunk("R", "- a\n\n- b"), "## R\n- a\n\n- b\n\n");
    assert_eq!(ok("## R\nold\n\n## Mine\n", "R", "- a"), "## R\n- a\n\n## Mine\n");
    assert_eq!(ok(text, "Routines", "- a"), format!("{}  ## Mine\nx\n", code_chunk("Routines", "- a")));
}

#[test]
fn a_title_with_markdown_is_refused() {
    for title in ["*x*", "a #", "two\nlines", " padded"] {
        assert_eq!(splice("", title, "b"), Err(SpliceError::TitleNotPlain(title.into())));
    }
    assert!(splice("", "[x]", "b").is_ok(), "brackets without a link are text");
    for p in super::super::producers::defaults() {
        assert!(splice("", p.section(), "- a").is_ok(), "{}", p.section());
    }
}

#[test]
fn select_picks_named_sections() {
    let text = "## A\na\n\n## B\nb\n\n```\n## C\n```\n\n## C\nc\n";
    assert_eq!(select(text, &["C".into(), "A".into()]), "## A\na\n\n## C\nc");
}

// ---------------------------------------------------------------------------------------
// Property: generated documents whose real headings the generator knows.
// ---------------------------------------------------------------------------------------

/// One block of a generated document, and the heading of level 1 or 2 it opens, if any.
#[derive(Debug, Clone)]
struct Piece {
    text: String,
    heading: Option<(u8, &'static str)>,
}

fn piece(text: impl Into<String>, heading: Option<(u8, &'static str)>) -> Piece {
    Piece { text: text.into(), heading }
}

fn look_alike() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["## Routines", "## Today's plan", "# Attention", "Routines\n---", "  ## Mine ##"])
}

/// Blocks that look like sections but are not: none of them opens one.
fn text_piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        Just(piece("Some notes, *mine*.\nA second line.\n", None)),
        (prop::sample::select(vec!["```", "````", "~~~", "``` md"]), look_alike()).prop_map(|(f, l)| {
            let close = f.split(' ').next().unwrap_or(f);
            piece(format!("{f}\n{l}\nafter it\n{close}\n"), None)
        }),
        look_alike().prop_map(|l| piece(format!("    {}\n", l.replace('\n', "\n    ")), None)),
        look_alike().prop_map(|l| piece(format!("> {}\n", l.replace('\n', "\n> ")), None)),
        Just(piece("-   item\n-   ## Routines\n", None)),
        Just(piece("<div>\n## Routines\n</div>\n", None)),
        Just(piece("### Routines\nan H3 is inside a section\n", None)),
    ]
}

/// The user's own sections and top-level headings.
fn heading_piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        Just(piece("## Mine\nhand written\n", Some((2, "Mine")))),
        Just(piece(" ## Notes ##\nx\n", Some((2, "Notes")))),
        Just(piece("   ## Far in\nz\n", Some((2, "Far in")))),
        Just(piece("Setext\n------\ny\n", Some((2, "Setext")))),
        Just(piece("# Attention\n", Some((1, "Attention")))),
        Just(piece("Big\n===\n", Some((1, "Big")))),
    ]
}

/// The producer's own section as a file might hold it.
fn own_piece(title: &'static str) -> impl Strategy<Value = Piece> {
    prop::sample::select(vec!["## {t}\nold\n", "   ## {t} ##\nold line\nolder line\n", "{t}\n--------\nold\n"])
        .prop_map(move |f| piece(f.replace("{t}", title), Some((2, title))))
}

fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    proptest::collection::vec(prop_oneof![3 => text_piece(), 2 => heading_piece()], 0..6)
}

/// A producer's body: usually list lines, now and then a line that would be a heading or
/// open a fence of its own.
fn own_body() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        6 => Just("- medication around 09:00"),
        1 => Just("## Mine"),
        1 => Just("```"),
        1 => Just("==="),
        1 => Just("<!--"),
    ];
    proptest::collection::vec(line, 0..4).prop_map(|l| l.join("\n"))
}

/// A generated document: its text, the span of the producer's section (if present), the H2
/// titles a reader must find, and whether the heading after the section is indented (so a
/// list body may be written as code to keep it out).
#[derive(Debug, Clone)]
struct Doc {
    text: String,
    own: Option<Range<usize>>,
    h2s: Vec<&'static str>,
    indented_next: bool,
}

fn assemble(parts: &[Piece], own_at: Option<usize>, crlf: bool, final_newline: bool) -> Doc {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut doc = Doc { text: String::new(), own: None, h2s: Vec::new(), indented_next: false };
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            doc.text.push_str(eol);
        }
        if p.heading.is_some() {
            if let Some(own) = doc.own.as_mut().filter(|r| r.end == usize::MAX) {
                own.end = doc.text.len();
                doc.indented_next = p.text.starts_with("  ");
            }
        }
        if Some(i) == own_at {
            doc.own = Some(doc.text.len()..usize::MAX);
        }
        doc.h2s.extend(p.heading.filter(|(level, _)| *level == 2).map(|(_, t)| t));
        doc.text.push_str(&p.text.replace('\n', eol));
    }
    if !final_newline {
        doc.text.truncate(doc.text.trim_end_matches(['\r', '\n']).len());
    }
    if let Some(own) = doc.own.as_mut().filter(|r| r.end == usize::MAX) {
        own.end = doc.text.len();
    }
    doc
}

fn doc() -> impl Strategy<Value = (Doc, &'static str)> {
    let title = prop::sample::select(vec!["Routines", "Today's plan"]);
    (title, pieces(), pieces(), any::<bool>(), any::<bool>(), any::<bool>()).prop_flat_map(
        |(title, before, after, present, crlf, final_newline)| {
            own_piece(title).prop_map(move |own| {
                let mut parts = before.clone();
                let own_at = present.then_some(parts.len());
                if present {
                    parts.push(own);
                }
                parts.extend(after.iter().cloned());
                (assemble(&parts, own_at, crlf, final_newline), title)
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn splice_keeps_every_byte_outside_its_section_and_is_idempotent((doc, title) in doc(), body in own_body()) {
        let text = &doc.text;
        prop_assert_eq!(titles(text), doc.h2s.iter().map(|t| t.to_string()).collect::<Vec<_>>());
        let out = splice(text, title, &body).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut own = chunk(title, &body);
        match &doc.own {
            Some(span) => {
                if doc.indented_next && !out[span.start..].starts_with(&own) {
                    own = code_chunk(title, &body);
                }
                prop_assert_eq!(&out[..span.start], &text[..span.start]);
                prop_assert_eq!(&out[span.start..span.start + own.len()], own.as_str());
                prop_assert_eq!(&out[span.start + own.len()..], &text[span.end..]);
            }
            None => {
                prop_assert!(out.starts_with(text.as_str()) && out.ends_with(&own), "{:?}", out);
                let sep = &out[text.len()..out.len() - own.len()];
                prop_assert!(sep.bytes().all(|b| b == b'\n'), "separator {:?}", sep);
            }
        }
        prop_assert_eq!(select(&out, &[title.to_owned()]), own.trim_end());
        prop_assert_eq!(splice(&out, title, &body), Ok(out.clone()), "idempotent");
    }
}
