//! Text on its way to a terminal or a status line (the `cli` outlet, the REPL) with its control and escape
//! sequences taken out: a reminder or a model's reply must not retitle the window, move the
//! cursor or hide what follows. Line breaks and tabs stay; everything printable stays. Strong
//! emphasis (`**menu option**`) is shown as plain words, as a terminal cannot render it. Other
//! outlets receive the text as given.

/// `text` without escape sequences (CSI, OSC, DCS and the like, whole) and without other
/// control characters but `\n` and `\t`.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` with the `**` of strong emphasis taken out where a line holds them in pairs.
pub fn plain_emphasis(text: &str) -> String {
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| match line.matches("**").count() {
            n if n > 0 && n % 2 == 0 => line.replace("**", ""),
            _ => line.to_owned(),
        })
        .collect();
    lines.join("\n")
}

/// Skips what follows an ESC: a CSI up to its final byte, a string sequence (OSC, DCS, SOS,
/// PM, APC) up to BEL or ESC `\`, or a single character.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{plain_emphasis, sanitize};

    #[test]
    fn strong_emphasis_shows_as_plain_words() {
        let menu = "What next?\n\n1. **Tidy the inbox** — it has grown\n2. a ** b\n";
        assert_eq!(plain_emphasis(menu), "What next?\n\n1. Tidy the inbox — it has grown\n2. a ** b\n");
    }

    #[test]
    fn escapes_and_controls_go_and_text_stays() {
        assert_eq!(sanitize("Tea\x1b]0;owned\x07 time"), "Tea time");
        assert_eq!(sanitize("\x1b[31mred\x1b[0m and \x1b[2J"), "red and ");
        assert_eq!(sanitize("a\x1bP1;2|data\x1b\\b"), "ab");
        assert_eq!(sanitize("bell\x07 cr\r back\x08 del\x7f c1\u{9b}31m"), "bell cr back del c131m");
        assert_eq!(sanitize("line one\n\tline two ⏰ ünïcode"), "line one\n\tline two ⏰ ünïcode");
    }

    proptest::proptest! {
        #[test]
        fn nothing_that_reaches_the_terminal_is_a_control(s in "\\PC*|[\\x00-\\x7f\\u{80}-\\u{9f}]*") {
            let out = sanitize(&s);
            proptest::prop_assert!(out.chars().all(|c| !c.is_control() || c == '\n' || c == '\t'), "{:?}", out);
        }
    }
}
