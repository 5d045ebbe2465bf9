//! Delivery (spec §6): the DeliveryHub that puts a message in its conversation and hands it
//! to an outlet (`cli`, `jsonl`, `webhook`, or a chat channel hosted by the gateway), the
//! outbox and its dead letters, the targets this data dir can reach, and the honesty rule for
//! an unwatched terminal. The execution paths (`executor`) deliver through it.

pub(crate) mod conversation;
pub mod hub;
pub mod outbox;
pub mod outlets;
pub(crate) mod remote;
pub mod targets;
pub(crate) mod watched;
pub(crate) mod webhook;
