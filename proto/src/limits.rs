//! The bounds on text the engine keeps: what a model or a peer sends can be any size, what is
//! stored is not. A text over its bound is cut at a character boundary and says so at its
//! end, so a reader sees it was cut and by how much.

/// A planner field (a nudge message, a spawn task, a defer condition, a reason).
pub const DECISION_FIELD_BYTES: usize = 4 * 1024;
/// The provider's own arguments, kept for the record.
pub const RAW_RESPONSE_BYTES: usize = 4 * 1024;
/// One message of a conversation, as a session line keeps it.
pub const SESSION_TEXT_BYTES: usize = 64 * 1024;
/// A tool call's arguments, as a session line keeps them (longer ones are kept as a note).
pub const TOOL_ARGUMENTS_BYTES: usize = 4 * 1024;
/// A tool call's id or its tool's name, as a session line keeps it.
pub const TOOL_ID_BYTES: usize = 256;
/// The tool calls of one model reply that the agent runs and keeps; later ones are dropped.
pub const TOOL_CALLS_PER_REPLY: usize = 16;
/// A message waiting in the outbox.
pub const OUTBOX_TEXT_BYTES: usize = 16 * 1024;
/// An error kept beside a waiting message or a dead letter.
pub const ERROR_TEXT_BYTES: usize = 1024;

/// `text`, cut to at most `max` bytes plus a note of what was cut.
pub fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let end = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    format!("{}… [cut: {} more bytes not kept]", &text[..end], text.len() - end).into()
}

/// Cuts `text` in place; whether it was cut.
pub fn cut_in_place(text: &mut String, max: usize) -> bool {
    match cut(text, max) {
        std::borrow::Cow::Owned(shorter) => {
            *text = shorter;
            true
        }
        std::borrow::Cow::Borrowed(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_within_its_bound_is_kept_and_one_over_it_is_cut_with_a_note() {
        assert_eq!(cut("short", 5), "short");
        assert_eq!(cut("abcdef", 4), "abcd… [cut: 2 more bytes not kept]");
        // Never inside a character: `é` is two bytes.
        assert_eq!(cut("aéé", 2), "a… [cut: 4 more bytes not kept]");
        let mut s = "x".repeat(10);
        assert!(cut_in_place(&mut s, 3));
        assert!(s.starts_with("xxx…"));
        assert!(!cut_in_place(&mut s, 1000));
    }
}
