//! Context assembly (spec §3): everything the Planner reads, each field from its source,
//! each degrading to its default on failure; and the derived state in attention.md.

pub mod assembler;
pub mod attention;
pub mod behaviors;
pub mod behaviors_extractor;
pub mod calendar;
pub mod daily_analysis;
pub mod deadlines;
pub mod plan;
pub mod preferences;
pub mod routines;
pub mod sessions;

pub use assembler::{Assemble, AssemblerService, AttentionChanged, ContextAssembler, RememberLastDecision};
