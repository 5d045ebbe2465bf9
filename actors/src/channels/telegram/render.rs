//! A message as Telegram shows it: MarkdownV2 with every special character escaped (what
//! the engine wrote is shown as written), cut into parts of at most 4,096 characters at a
//! line or word break, and the feedback buttons under the last part.

use crate::channels::buttons::{Tapped, BUTTONS};
use serde_json::{json, Value};

/// Telegram's limit on one message's text, in UTF-16 code units (after escapes are read).
pub const MAX_CHARS: usize = 4096;

/// Escapes `text` for `parse_mode: MarkdownV2`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if "_*[]()~`>#+-=|{}.!\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` in parts of at most `max` UTF-16 units, each ending at a line break, else a space,
/// else wherever the limit falls (never inside a character).
pub fn split(text: &str, max: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while rest.encode_utf16().count() > max {
        let mut end = 0;
        let mut units = 0;
        for (i, c) in rest.char_indices() {
            units += c.len_utf16();
            if units > max {
                break;
            }
            end = i + c.len_utf8();
        }
        let head = &rest[..end];
        let cut = head.rfind('\n').or_else(|| head.rfind(' ')).filter(|&i| i > 0).map_or(end, |i| i + 1);
        parts.push(rest[..cut].trim_end().to_owned());
        rest = &rest[cut..];
    }
    if !rest.trim().is_empty() || parts.is_empty() {
        parts.push(rest.to_owned());
    }
    parts
}

/// The inline keyboard under `text`: one button an option under a discovery menu, a row of
/// feedback buttons for each item of a morning brief, the feedback buttons under a rated
/// nudge, none under the rest.
pub fn keyboard(text: &raven_proto::OutboundText) -> Option<Value> {
    let button = |label: String, tap: Tapped| json!({"text": label, "callback_data": tap.encode()});
    if let Some(items) = crate::channels::buttons::brief_items(text) {
        let rows: Vec<Value> = (1..)
            .zip(items)
            .map(|(n, item)| {
                let verdicts = BUTTONS.iter().map(|b| {
                    let label = format!("{n} {}", b.label.split(' ').next().unwrap_or(b.label));
                    button(label, Tapped::Verdict { verdict: b.verdict, nudge: item.clone() })
                });
                Value::Array(verdicts.collect())
            })
            .collect();
        return Some(json!({ "inline_keyboard": rows }));
    }
    let row: Vec<Value> = match (crate::channels::buttons::menu(text), crate::channels::buttons::rated_nudge(text)) {
        (Some((menu, n)), _) => {
            (1..=n).map(|n| button(n.to_string(), Tapped::Pick { menu: menu.clone(), n })).collect()
        }
        (None, Some(nudge)) => BUTTONS
            .iter()
            .map(|b| button(b.label.to_owned(), Tapped::Verdict { verdict: b.verdict, nudge: nudge.clone() }))
            .collect(),
        (None, None) => return None,
    };
    Some(json!({ "inline_keyboard": [row] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brief_has_a_row_of_verdicts_under_each_item() {
        let mut text = raven_proto::OutboundText::proactive("b1", "telegram", "42", "Good morning");
        text.extras.insert(raven_proto::NUDGE_ID.into(), "n-1".into());
        text.extras.insert(raven_proto::RATED.into(), "true".into());
        text.extras.insert(raven_proto::BRIEF_ITEMS.into(), "a1b2c3,d4e5f6".into());
        let rows = keyboard(&text).unwrap()["inline_keyboard"].clone();
        let labels: Vec<Vec<&str>> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(|b| b["text"].as_str().unwrap()).collect())
            .collect();
        assert_eq!(labels, [["1 👍", "1 ⏰", "1 🛑"], ["2 👍", "2 ⏰", "2 🛑"]]);
        assert_eq!(rows[1][1]["callback_data"], "v:later:d4e5f6");
    }

    #[test]
    fn every_markdown_v2_special_character_is_escaped() {
        assert_eq!(
            escape("Pay 1.5 (now)! a_b *c* [d] ~e~ `f` >g #h +i -j =k |l {m} \\"),
            "Pay 1\\.5 \\(now\\)\\! a\\_b \\*c\\* \\[d\\] \\~e\\~ \\`f\\` \\>g \\#h \\+i \\-j \\=k \\|l \\{m\\} \\\\"
        );
        assert_eq!(escape("plain words"), "plain words");
    }

    #[test]
    fn long_text_is_split_at_breaks_within_the_limit() {
        let line = "word ".repeat(300);
        let text = format!("{line}\n{line}\n{line}");
        let parts = split(&text, MAX_CHARS);
        assert_eq!(parts.len(), 2, "{:?}", parts.iter().map(|p| p.len()).collect::<Vec<_>>());
        assert!(parts.iter().all(|p| p.encode_utf16().count() <= MAX_CHARS));
        assert_eq!(parts.join("\n").split_whitespace().count(), 900, "no word lost");
        // No break at all: cut at the limit, never inside a character.
        let emoji = "😀".repeat(3000);
        let parts = split(&emoji, MAX_CHARS);
        assert!(parts.iter().all(|p| p.encode_utf16().count() <= MAX_CHARS));
        assert_eq!(parts.concat(), emoji);
        assert_eq!(split("short", MAX_CHARS), vec!["short"]);
    }
}
