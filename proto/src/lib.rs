//! raven-proto: the typed messages of Raven (spec §1) and the framed wire codec.
//!
//! Nothing here depends on another Raven crate; every type that crosses an actor or a
//! process boundary lives here so both sides of a socket agree on it.

pub mod control;
pub mod decision;
pub mod delivery;
pub mod limits;
pub mod outcome;
pub mod planner_context;
pub mod policy;
pub mod turn;
pub mod wire;

pub use decision::{Action, PlannerDecision, Priority};
pub use delivery::{split_target, OutboundText, BRIEF_ITEMS, NUDGE_ID, RATED};
pub use outcome::{ExecutionResult, Path, Route, TickOutcome};
pub use planner_context::{
    ActiveSession, CalendarEntry, PlannerContext, PolicySnapshot, Routine, RoutineDays, TopicFireHistory,
};
pub use policy::{PolicyLayer, Verdict};
pub use turn::{BusyPolicy, Origin, TurnRequest};
