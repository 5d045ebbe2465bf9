//! What a user's message can mean before any model reads it: the feedback commands (`/ok`,
//! `/stop`, `/snooze`, a verdict on a reminder) answered in place.

pub mod commands;
pub mod feedback_hook;
