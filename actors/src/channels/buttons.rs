//! The buttons under a proactive message and the short data they carry back when tapped:
//! under a rated nudge the feedback buttons (👍, later, stop), each a verdict; under a
//! discovery menu one button an option, each a pick (`/pick <menu> <n>`, as if typed); under a
//! morning brief a row of verdicts for each item (its number, then 👍, later, stop).

/// One button: what it shows, and the verdict a tap records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Button {
    pub label: &'static str,
    pub verdict: &'static str,
}

/// 👍 records `accepted`, "later" puts the message off and sends it again
/// ([`crate::cron::later`]), "stop" records `dismissed`.
pub const BUTTONS: [Button; 3] = [
    Button { label: "👍", verdict: "accepted" },
    Button { label: "⏰ later", verdict: "later" },
    Button { label: "🛑 stop", verdict: "dismissed" },
];

/// The "later" button.
pub const LATER: Button = BUTTONS[1];

/// The verdict a reaction emoji stands for (Matrix reactions), if any.
pub fn verdict_of_reaction(key: &str) -> Option<&'static str> {
    match key.trim_end_matches('\u{fe0f}') {
        "👍" | "✅" | "❤" | "❤️" => Some("accepted"),
        "⏰" | "🕐" => Some("later"),
        "👎" | "🛑" | "❌" => Some("dismissed"),
        _ => None,
    }
}

/// `/ok`, `/stop` or `/later` sent as a reply: aimed at the nudge replied to (`/stop [3fa2c1]`), when
/// `replied_to` finds it; `None`, the text goes as it is.
pub fn aimed_at_reply(text: &str, replied_to: impl FnOnce() -> Option<String>) -> Option<String> {
    let command = text.trim().to_lowercase();
    if !matches!(command.as_str(), "/ok" | "/stop" | "/later") {
        return None;
    }
    replied_to().map(|nudge| format!("{command} [{nudge}]"))
}

/// The option a keycap reaction picks under a menu (Matrix reactions): `1️⃣` to `9️⃣`, `🔟`.
pub fn pick_of_reaction(key: &str) -> Option<usize> {
    if key == "🔟" {
        return Some(10);
    }
    let mut chars = key.chars().filter(|c| *c != '\u{fe0f}');
    match (chars.next(), chars.next(), chars.next()) {
        (Some(digit @ '1'..='9'), Some('\u{20e3}'), None) => digit.to_digit(10).map(|d| d as usize),
        _ => None,
    }
}

/// The keycap reaction that picks option `n` (1 to 10), as [`pick_of_reaction`] reads it.
pub fn keycap(n: usize) -> Option<String> {
    match n {
        1..=9 => Some(format!("{n}\u{fe0f}\u{20e3}")),
        10 => Some("🔟".to_owned()),
        _ => None,
    }
}

/// What a tap means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tapped {
    /// A verdict on a nudge (its short id).
    Verdict { verdict: &'static str, nudge: String },
    /// Option `n` of discovery menu `menu`.
    Pick { menu: String, n: usize },
}

impl Tapped {
    /// What a tap carries back: `v:<verdict>:<nudge>` or `p:<menu>:<n>` (Telegram allows 64
    /// bytes; a short nudge id is 6, a menu id a few).
    pub fn encode(&self) -> String {
        match self {
            Tapped::Verdict { verdict, nudge } => format!("v:{verdict}:{nudge}"),
            Tapped::Pick { menu, n } => format!("p:{menu}:{n}"),
        }
    }

    /// The tap `data` carries, when it is one of ours.
    pub fn decode(data: &str) -> Option<Tapped> {
        let (kind, rest) = data.split_once(':')?;
        let (what, id) = rest.split_once(':')?;
        match kind {
            "v" => {
                // A button sent by an earlier version: its "later" carried `neutral`.
                let what = if what == "neutral" { "later" } else { what };
                let verdict = BUTTONS.iter().find(|b| b.verdict == what)?.verdict;
                (!id.is_empty()).then(|| Tapped::Verdict { verdict, nudge: id.to_owned() })
            }
            "p" => {
                let n = id.parse().ok().filter(|n| *n > 0)?;
                (!what.is_empty()).then(|| Tapped::Pick { menu: what.to_owned(), n })
            }
            _ => None,
        }
    }
}

/// The menu id and number of options of a discovery menu (its nudge id is `menu-<id>`; its
/// options are the numbered lines).
pub fn menu(text: &raven_proto::OutboundText) -> Option<(String, usize)> {
    let id = text.extras.get(raven_proto::NUDGE_ID)?.strip_prefix("menu-")?;
    let numbered =
        |l: &&str| l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let options = text.content.lines().filter(numbered).count();
    (options > 0 && text.is_proactive()).then(|| (id.to_owned(), options))
}

/// The short ids of a morning brief's items, in order: a row of feedback buttons under each.
pub fn brief_items(text: &raven_proto::OutboundText) -> Option<Vec<String>> {
    let ids = text.extras.get(raven_proto::BRIEF_ITEMS)?;
    let ids: Vec<String> = ids.split(',').filter(|i| !i.is_empty()).map(str::to_owned).collect();
    (!ids.is_empty() && text.is_proactive()).then_some(ids)
}

/// The nudge a message carries feedback buttons for: a proactive message the feedback loop
/// rates, other than a menu (which carries its options).
pub fn rated_nudge(text: &raven_proto::OutboundText) -> Option<String> {
    let rated = text.extras.get(raven_proto::RATED).is_some_and(|v| v == "true");
    let id = text.extras.get(raven_proto::NUDGE_ID)?;
    (rated && text.is_proactive() && !id.starts_with("menu-")).then(|| crate::feedback::short_id(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tap_carries_its_verdict_or_pick_back() {
        for b in BUTTONS {
            let tap = Tapped::Verdict { verdict: b.verdict, nudge: "a1b2c3".into() };
            assert!(tap.encode().len() <= 64);
            assert_eq!(Tapped::decode(&tap.encode()), Some(tap));
        }
        let pick = Tapped::Pick { menu: "m12".into(), n: 3 };
        assert_eq!(Tapped::decode(&pick.encode()), Some(pick));
        for bad in ["v:loved:a1b2c3", "v:accepted:", "p:m1:0", "p::2", "p:m1:x", "something else"] {
            assert_eq!(Tapped::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_menu_is_known_by_its_id_and_counted_by_its_numbered_lines() {
        let content = crate::executor::dispatcher::render_menu(
            "Anything?",
            &[1, 2].map(|i| crate::executor::dispatcher::MenuOption { title: format!("t{i}"), reason: "r".into() }),
            crate::time::Language::English,
        );
        let mut text = raven_proto::OutboundText::proactive("d", "telegram", "42", content);
        assert_eq!(menu(&text), None, "no menu id");
        text.extras.insert(raven_proto::NUDGE_ID.into(), "menu-m7".into());
        assert_eq!(menu(&text), Some(("m7".into(), 2)));
    }

    #[test]
    fn keycap_reactions_pick_menu_options() {
        for n in 1..=10 {
            assert_eq!(pick_of_reaction(&keycap(n).unwrap()), Some(n));
        }
        assert_eq!(pick_of_reaction("3\u{20e3}"), Some(3), "without the variation selector");
        assert_eq!(keycap(11), None);
        for other in ["3", "0\u{fe0f}\u{20e3}", "👍", "12\u{20e3}", ""] {
            assert_eq!(pick_of_reaction(other), None, "{other:?}");
        }
    }

    #[test]
    fn reactions_map_to_verdicts() {
        assert_eq!(verdict_of_reaction("👍"), Some("accepted"));
        assert_eq!(verdict_of_reaction("👎"), Some("dismissed"));
        assert_eq!(verdict_of_reaction("🎉"), None);
    }
}
