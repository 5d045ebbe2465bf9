//! Behavior events: the `record_behaviors` tool's arguments, validated, and their one-line
//! form in behaviors.md. The model's answer is data to check, never text to parse: any
//! event that does not validate rejects the whole answer, so a half-understood reply never
//! lands in the file.

use super::error::{AnswerError, EventError};
use chrono::NaiveDateTime;
use serde_json::Value;
use std::fmt::Write as _;

/// `at` as the model writes it and as behaviors.md keeps it (the user's local time).
pub const AT_FORMAT: &str = "%Y-%m-%d %H:%M";

/// Longest `kind` accepted.
pub const MAX_KIND_CHARS: usize = 32;

/// Longest `summary` accepted, in characters, after whitespace is collapsed.
pub const MAX_SUMMARY_CHARS: usize = 300;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BehaviorEvent {
    /// When it happened, in the user's local time.
    pub at: NaiveDateTime,
    /// A short lowercase slug: `routine`, `preference`, `habit`, `commitment`...
    pub kind: String,
    /// One line, in the third person.
    pub summary: String,
}

impl BehaviorEvent {
    /// `- YYYY-MM-DD HH:MM [kind] summary`: one list item, so `folded_tail` reads it back as
    /// one event.
    pub fn line(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "- {} [{}] {}", self.at.format(AT_FORMAT), self.kind, self.summary);
        s
    }
}

/// The events of a `record_behaviors` call, or why the call is refused. At most
/// `max_events`; an empty list is a valid answer (nothing worth keeping).
pub fn parse_events(arguments: &Value, max_events: usize) -> Result<Vec<BehaviorEvent>, AnswerError> {
    let items =
        arguments.get("events").and_then(Value::as_array).ok_or_else(|| AnswerError::NoList(clip(arguments)))?;
    if items.len() > max_events {
        return Err(AnswerError::TooMany { got: items.len(), max: max_events });
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_event(item).map_err(|why| AnswerError::Event { number: i + 1, why }))
        .collect()
}

fn parse_event(item: &Value) -> Result<BehaviorEvent, EventError> {
    let field = |k: &'static str| item.get(k).and_then(Value::as_str).ok_or(EventError::Missing(k));
    let at_text = field("at")?.trim();
    let at = NaiveDateTime::parse_from_str(at_text, AT_FORMAT).map_err(|_| EventError::At(at_text.to_owned()))?;
    let kind = field("kind")?.trim().to_lowercase();
    let slug = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    if kind.is_empty() || kind.chars().count() > MAX_KIND_CHARS || !kind.chars().all(slug) {
        return Err(EventError::Kind(kind));
    }
    // Collapsed to one line: a newline followed by `- ` would otherwise start a new event.
    let summary = field("summary")?.split_whitespace().collect::<Vec<_>>().join(" ");
    if summary.is_empty() {
        return Err(EventError::EmptySummary);
    }
    if summary.chars().count() > MAX_SUMMARY_CHARS {
        return Err(EventError::LongSummary);
    }
    Ok(BehaviorEvent { at, kind, summary })
}

fn clip(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_valid_event_is_normalized_to_one_line() {
        let args =
            json!({"events": [{"at": " 2026-03-02 08:05 ", "kind": " Routine ", "summary": "Runs\n- before   work"}]});
        let events = parse_events(&args, 5).unwrap();
        assert_eq!(events[0].line(), "- 2026-03-02 08:05 [routine] Runs - before work");
        assert_eq!(parse_events(&json!({"events": []}), 5).unwrap(), vec![]);
    }

    #[test]
    fn each_malformed_shape_is_refused_with_its_reason() {
        let ok = json!({"at": "2026-03-02 08:05", "kind": "habit", "summary": "s"});
        let with = |k: &str, v: Value| {
            let mut e = ok.clone();
            e[k] = v;
            json!({"events": [ok.clone(), e]})
        };
        let cases = [
            (json!({"events": "none"}), "no `events` list"),
            (json!({}), "no `events` list"),
            (json!({"events": [ok.clone(), ok.clone(), ok.clone()]}), "more than the 2 allowed"),
            (with("at", json!("yesterday")), "event 2: at `yesterday`"),
            (with("at", json!("2026-03-02T08:05")), "not YYYY-MM-DD HH:MM"),
            (with("kind", json!("daily routine")), "event 2: kind"),
            (with("kind", json!("")), "kind ``"),
            (with("summary", json!("  \n ")), "summary is empty"),
            (with("summary", json!("x".repeat(MAX_SUMMARY_CHARS + 1))), "longer than"),
            (with("summary", json!(7)), "`summary` is missing"),
        ];
        for (args, want) in cases {
            let err = parse_events(&args, 2).unwrap_err().to_string();
            assert!(err.contains(want), "{args}: {err}");
        }
    }
}
