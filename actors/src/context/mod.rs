//! Context assembly (spec §3): everything the Planner reads, each field from its source,
//! each degrading to its default on failure.

pub mod deadlines;
