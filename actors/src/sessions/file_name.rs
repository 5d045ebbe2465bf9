//! The file a conversation is kept in: `sessions/<channel>_<chat_id>.jsonl`, where each part
//! is percent-encoded (`%`, `_`, `/`, `\`, control bytes and every non-ASCII byte). The first
//! `_` of a name is therefore always the separator, and the name can be decoded back to the
//! exact `(channel, chat_id)` it came from: two conversations never share a file.
//!
//! A name that could not be a file (empty, too long, a control character) is refused with
//! [`SessionNameError`] before anything is answered, never saved nowhere in silence.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

/// Bytes that are encoded: the separator, the escape itself, path separators, controls
/// (non-ASCII bytes are always encoded).
const ENCODED: &AsciiSet = &CONTROLS.add(b'%').add(b'_').add(b'/').add(b'\\');

/// The longest channel name, in bytes.
pub const MAX_CHANNEL_BYTES: usize = 32;
/// The longest chat id, in bytes.
pub const MAX_CHAT_ID_BYTES: usize = 128;
/// The longest file name most file systems take.
pub const MAX_FILE_NAME_BYTES: usize = 255;

const SUFFIX: &str = ".jsonl";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionNameError {
    #[error("{0} must not be empty")]
    Empty(&'static str),
    #[error("{what} is {len} bytes; at most {max} are allowed")]
    TooLong { what: &'static str, len: usize, max: usize },
    #[error("{0} must not hold control characters")]
    Control(&'static str),
    #[error("channel may hold only letters, digits, `-`, `_` and `.`")]
    Channel,
    #[error(
        "the conversation's file name would be {0} bytes (at most {MAX_FILE_NAME_BYTES}; `%`, `_`, `/`, `\\` and \
         non-ASCII characters take 3 bytes each)"
    )]
    FileName(usize),
}

/// Checks a `(channel, chat_id)` as a conversation the engine can keep.
pub fn validate(channel: &str, chat_id: &str) -> Result<(), SessionNameError> {
    file_name(channel, chat_id).map(drop)
}

/// The file name of the conversation `(channel, chat_id)`.
pub fn file_name(channel: &str, chat_id: &str) -> Result<String, SessionNameError> {
    check_part("channel", channel, MAX_CHANNEL_BYTES)?;
    if !channel.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) {
        return Err(SessionNameError::Channel);
    }
    check_part("chat_id", chat_id, MAX_CHAT_ID_BYTES)?;
    let name = format!("{}_{}{SUFFIX}", encode(channel), encode(chat_id));
    match name.len() {
        n if n > MAX_FILE_NAME_BYTES => Err(SessionNameError::FileName(n)),
        _ => Ok(name),
    }
}

/// The `(channel, chat_id)` a file name was made from; `None` for a file that is not a
/// conversation (or not one in this encoding).
pub fn parse(file_name: &str) -> Option<(String, String)> {
    let stem = file_name.strip_suffix(SUFFIX)?;
    let (channel, chat) = stem.split_once('_')?;
    if channel.is_empty() || chat.is_empty() {
        return None;
    }
    Some((decode(channel)?, decode(chat)?))
}

/// What an older release's file name reads as: split at its first `_`.
pub fn parse_legacy(file_name: &str) -> Option<(String, String)> {
    let (channel, chat) = file_name.strip_suffix(SUFFIX)?.split_once('_')?;
    Some((channel.to_owned(), chat.to_owned()))
}

fn check_part(what: &'static str, s: &str, max: usize) -> Result<(), SessionNameError> {
    if s.is_empty() {
        return Err(SessionNameError::Empty(what));
    }
    if s.len() > max {
        return Err(SessionNameError::TooLong { what, len: s.len(), max });
    }
    if s.chars().any(char::is_control) {
        return Err(SessionNameError::Control(what));
    }
    Ok(())
}

fn encode(s: &str) -> String {
    utf8_percent_encode(s, ENCODED).to_string()
}

fn decode(s: &str) -> Option<String> {
    // Only what `encode` makes decodes: anything else is not one of ours.
    let decoded = percent_decode_str(s).decode_utf8().ok()?.into_owned();
    (encode(&decoded) == s).then_some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_three_names_that_once_shared_a_file_are_three_files() {
        let names = [
            file_name("webhook", "alice_1").unwrap(),
            file_name("webhook", "alice/1").unwrap(),
            file_name("webhook_alice", "1").unwrap(),
        ];
        assert_eq!(names, ["webhook_alice%5F1.jsonl", "webhook_alice%2F1.jsonl", "webhook%5Falice_1.jsonl"]);
        for (n, pair) in names.iter().zip([("webhook", "alice_1"), ("webhook", "alice/1"), ("webhook_alice", "1")]) {
            assert_eq!(parse(n), Some((pair.0.to_owned(), pair.1.to_owned())));
        }
    }

    #[test]
    fn names_a_file_cannot_hold_are_refused_with_the_reason() {
        assert_eq!(file_name("webhook", ""), Err(SessionNameError::Empty("chat_id")));
        assert_eq!(file_name("webhook", "a\0b"), Err(SessionNameError::Control("chat_id")));
        let long = "x".repeat(300);
        assert_eq!(
            file_name("webhook", &long),
            Err(SessionNameError::TooLong { what: "chat_id", len: 300, max: MAX_CHAT_ID_BYTES })
        );
        assert_eq!(file_name("web:hook", "1"), Err(SessionNameError::Channel));
        assert!(matches!(file_name("webhook", &"é".repeat(60)), Err(SessionNameError::FileName(_))));
        assert!(file_name("webhook", &"x".repeat(MAX_CHAT_ID_BYTES)).is_ok());
    }

    #[test]
    fn files_that_are_not_conversations_parse_as_none() {
        for name in ["notes.txt", "nounderscore.jsonl", "_x.jsonl", "x_.jsonl", "a_b%zz.jsonl", "a_%61.jsonl"] {
            assert_eq!(parse(name), None, "{name}");
        }
    }

    proptest! {
        #[test]
        fn encoding_is_reversible_and_so_injective(
            channel in "[a-zA-Z0-9_.-]{1,32}",
            chat in "\\PC{1,40}",
        ) {
            if let Ok(name) = file_name(&channel, &chat) {
                prop_assert!(!name.contains('/') && !name.contains('\0'));
                prop_assert_eq!(parse(&name), Some((channel, chat)));
            }
        }
    }
}
