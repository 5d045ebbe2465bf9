//! Which part of Raven said a proactive line: kept on the line, and read by feedback (what is
//! rated) and by the journal.

use serde::{Deserialize, Serialize};

/// Who said it. Sentinel nudges, injects, defers, spawns and discovery menus are rated; a
/// cron reminder and a heartbeat reply are tasks the user wrote: on record, never rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    #[default]
    Sentinel,
    Inject,
    Defer,
    Spawn,
    Discovery,
    Cron,
    Heartbeat,
}

impl Source {
    pub fn is_rated(self) -> bool {
        !matches!(self, Source::Cron | Source::Heartbeat)
    }

    pub fn name(self) -> &'static str {
        match self {
            Source::Sentinel => "sentinel",
            Source::Inject => "inject",
            Source::Defer => "defer",
            Source::Spawn => "spawn",
            Source::Discovery => "discovery",
            Source::Cron => "cron",
            Source::Heartbeat => "heartbeat",
        }
    }
}
