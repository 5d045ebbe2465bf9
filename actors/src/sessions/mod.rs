//! Conversations on disk: one JSON-lines file per chat (`sessions/<channel>_<chat>.jsonl`,
//! with injective names, see [`file_name`]), the lines written into them ([`SessionLine`]),
//! the one-time move from older names ([`layout`]) and the replay of a conversation as the
//! model's messages ([`replay`]). The floor every reader of a conversation stands on.

pub(crate) mod file_name;
mod hooks;
pub(crate) mod layout;
pub(crate) mod replay;
mod source;
mod store;

pub use hooks::{Answer, HistorySink, InboundHook};
pub use source::Source;
pub use store::*;
