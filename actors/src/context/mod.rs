//! Context assembly (spec §3): everything the Planner reads, each field from its source,
//! each degrading to its default on failure; and the derived state in attention.md.

pub(crate) mod assembler;
pub mod attention;
pub(crate) mod behaviors;
pub(crate) mod behaviors_extractor;
pub(crate) mod brief;
pub(crate) mod calendar;
pub(crate) mod daily_analysis;
pub mod deadlines;
pub(crate) mod plan;
pub mod preferences;
pub(crate) mod routines;
pub(crate) mod sessions;
pub(crate) mod words;

pub use assembler::{Assemble, AssemblerService, AttentionChanged, ContextAssembler, RememberLastDecision};
