//! A message on its way out to a channel (spec §6): the DeliveryHub's unit of work.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The extra marking a message the Sentinel sent on its own (not a reply).
pub const SENTINEL_ORIGIN: &str = "_sentinel_origin";

/// The extra carrying a proactive message's nudge id (an outlet may show its short form).
pub const NUDGE_ID: &str = "nudge_id";
/// Extras key: `"true"` on a proactive message the feedback loop rates (a channel shows its
/// feedback buttons).
pub const RATED: &str = "rated";
/// Extras key: the short ids of a morning brief's items, in order, comma-separated (a channel
/// with buttons puts one row under each item).
pub const BRIEF_ITEMS: &str = "brief_items";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboundText {
    /// Unique per message; a receiver that sees it twice can drop the second copy.
    pub delivery_id: String,
    pub channel: String,
    pub chat_id: String,
    pub content: String,
    /// Source extras, such as [`SENTINEL_ORIGIN`].
    pub extras: BTreeMap<String, String>,
}

impl OutboundText {
    pub fn proactive(delivery_id: impl Into<String>, channel: &str, chat_id: &str, content: impl Into<String>) -> Self {
        let mut extras = BTreeMap::new();
        extras.insert(SENTINEL_ORIGIN.to_owned(), "true".to_owned());
        OutboundText {
            delivery_id: delivery_id.into(),
            channel: channel.to_owned(),
            chat_id: chat_id.to_owned(),
            content: content.into(),
            extras,
        }
    }

    pub fn is_proactive(&self) -> bool {
        self.extras.get(SENTINEL_ORIGIN).is_some_and(|v| v == "true")
    }

    /// `channel:chat_id`.
    pub fn target(&self) -> String {
        format!("{}:{}", self.channel, self.chat_id)
    }
}

/// `"telegram:42"` → `("telegram", "42")`; a bare channel gets chat id `"default"`.
pub fn split_target(target: &str) -> (String, String) {
    match target.split_once(':') {
        Some((c, id)) if !c.is_empty() && !id.is_empty() => (c.to_owned(), id.to_owned()),
        _ => (target.trim_end_matches(':').to_owned(), "default".to_owned()),
    }
}
