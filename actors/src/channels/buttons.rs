//! The feedback buttons under a proactive message (👍, later, stop) and the short data they
//! carry back when tapped. Every channel shows the same three and maps a tap to the same
//! verdict.

/// One button: what it shows, and the verdict a tap records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Button {
    pub label: &'static str,
    pub verdict: &'static str,
}

/// 👍 records `accepted`, "later" `neutral` (seen, not now), "stop" `dismissed`.
pub const BUTTONS: [Button; 3] = [
    Button { label: "👍", verdict: "accepted" },
    Button { label: "⏰ later", verdict: "neutral" },
    Button { label: "🛑 stop", verdict: "dismissed" },
];

/// The verdict a reaction emoji stands for (Matrix reactions), if any.
pub fn verdict_of_reaction(key: &str) -> Option<&'static str> {
    match key.trim_end_matches('\u{fe0f}') {
        "👍" | "✅" | "❤" | "❤️" => Some("accepted"),
        "⏰" | "🕐" => Some("neutral"),
        "👎" | "🛑" | "❌" => Some("dismissed"),
        _ => None,
    }
}

/// `v:<verdict>:<nudge>`: what a tap carries back (Telegram allows 64 bytes; the short id
/// of a nudge is 6).
pub fn encode(verdict: &str, nudge: &str) -> String {
    format!("v:{verdict}:{nudge}")
}

/// The verdict and nudge a tap carries, when it is one of ours.
pub fn decode(data: &str) -> Option<(&'static str, &str)> {
    let rest = data.strip_prefix("v:")?;
    let (verdict, nudge) = rest.split_once(':')?;
    let verdict = BUTTONS.iter().find(|b| b.verdict == verdict)?.verdict;
    (!nudge.is_empty()).then_some((verdict, nudge))
}

/// The nudge a message carries buttons for: a proactive message the feedback loop rates.
pub fn rated_nudge(text: &raven_proto::OutboundText) -> Option<String> {
    let rated = text.extras.get(raven_proto::RATED).is_some_and(|v| v == "true");
    let id = text.extras.get(raven_proto::NUDGE_ID)?;
    (rated && text.is_proactive()).then(|| crate::feedback::short_id(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tap_carries_its_verdict_and_nudge_back() {
        for b in BUTTONS {
            let data = encode(b.verdict, "a1b2c3");
            assert!(data.len() <= 64);
            assert_eq!(decode(&data), Some((b.verdict, "a1b2c3")));
        }
        assert_eq!(decode("v:loved:a1b2c3"), None);
        assert_eq!(decode("v:accepted:"), None);
        assert_eq!(decode("something else"), None);
    }

    #[test]
    fn reactions_map_to_verdicts() {
        assert_eq!(verdict_of_reaction("👍"), Some("accepted"));
        assert_eq!(verdict_of_reaction("👎"), Some("dismissed"));
        assert_eq!(verdict_of_reaction("🎉"), None);
    }
}
