//! DailyAnalysisService (spec §9): one LLM call a day whose result several attention
//! producers share. Off by default (`context.daily_analysis`); with it off, the producers
//! that need it are skipped, not failed. The result is kept in
//! `user_memory/daily_analysis.json`, so a restart or a peer process on the same data dir
//! does not pay for the day's call again.

use crate::store::write_atomic;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DailyAnalysis {
    /// The user's local day it was made for.
    pub date: NaiveDate,
    /// What deserves the user's attention today.
    pub focus: String,
    /// What could go wrong today if nobody looks.
    pub watch_out: String,
}

pub const TOOL_NAME: &str = "daily_analysis";

/// The stored analysis, if it is for `today`.
pub fn load(path: &Path, today: NaiveDate) -> Option<DailyAnalysis> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<DailyAnalysis>(&text).ok().filter(|a| a.date == today)
}

pub fn save(path: &Path, a: &DailyAnalysis) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(a).map_err(std::io::Error::other)?;
    write_atomic(path, &bytes)
}
