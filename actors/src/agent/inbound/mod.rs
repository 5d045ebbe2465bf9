//! What a user's message can mean before any model reads it: the feedback commands (`/ok`,
//! `/stop`, `/snooze`, a verdict on a reminder) and the chat commands (`/start`, `/help`,
//! `/remind`, `/list`, `/cancel`, `/pause`, `/resume`) answered in place, and a request for quiet
//! in words (`hush`), and "too late" (`late`).

pub(crate) mod chat;
pub mod commands;
pub(crate) mod feedback_hook;
mod hush;
pub(crate) mod language;
mod late;
