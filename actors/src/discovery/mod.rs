//! Task discovery (spec §12): once a day the TaskDiscoverer proposes a menu of tasks; the
//! PendingDecisionStore keeps it; the DecisionRouter tells a pick from other replies; the
//! DecisionConsumer (a user-inbound hook) runs the picked option through the ActionExecutor,
//! behind a confirm step when the option asks for one. Every action passes the NudgePolicy
//! and records its fire.

pub(crate) mod action;
pub(crate) mod consumer;
pub(crate) mod discoverer;
pub(crate) mod error;
pub(crate) mod pending;
pub(crate) mod prompt;
pub(crate) mod restraint;
pub(crate) mod router;

pub use action::ActionExecutor;
pub use consumer::DecisionConsumer;
pub use discoverer::{Discovered, DiscoveryRun, TaskDiscoverer};
pub use pending::{Choice, ChoiceAction, PendingDecision, PendingDecisionStore, PendingState};
pub use router::{parse_reply, DecisionRouter, Routed, Said};

#[cfg(test)]
mod tests;
