//! The tokens spent per local day (owner `llm_tokens` of the state database; an earlier
//! version's `sentinel/llm_tokens.json` is imported), shared by every process on the data dir,
//! against `llm.daily_token_budget`.

use crate::store::{JsonStateStore, StoreError};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

const SECTION: &str = "llm_tokens";

/// One local day's spending, in all and per role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub day: Option<NaiveDate>,
    pub total: u64,
    #[serde(default)]
    pub by_role: BTreeMap<String, u64>,
}

/// A handle on the day's spending; clones share the store (a write may run on another thread).
#[derive(Clone)]
pub struct DailyTokens {
    store: Arc<JsonStateStore>,
}

impl DailyTokens {
    /// The day's spending kept in `store` (the owner's rows, or a file in a test).
    pub fn on(store: JsonStateStore) -> Self {
        DailyTokens { store: Arc::new(store) }
    }

    /// Tokens spent on `today` (0 when the file holds another day).
    pub fn spent(&self, today: NaiveDate) -> Result<u64, StoreError> {
        let (s, _) = self.store.read::<Spent>(SECTION)?;
        Ok(if s.day == Some(today) { s.total } else { 0 })
    }

    /// Adds `tokens` spent by `role` on `today`; answers the day's total.
    pub fn add(&self, today: NaiveDate, role: &str, tokens: u64) -> Result<u64, StoreError> {
        self.store.update(SECTION, |s: &mut Spent| {
            if s.day != Some(today) {
                *s = Spent { day: Some(today), ..Spent::default() };
            }
            s.total += tokens;
            *s.by_role.entry(role.to_owned()).or_default() += tokens;
            s.total
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_counts_from_zero_and_two_handles_share_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let on = || DailyTokens::on(JsonStateStore::new(tmp.path().join("t.json")));
        let (a, b) = (on(), on());
        let day = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
        a.add(day, "planner", 100).unwrap();
        assert_eq!(b.add(day, "agent", 50).unwrap(), 150);
        assert_eq!(a.spent(day).unwrap(), 150);
        assert_eq!(a.spent(day.succ_opt().unwrap()).unwrap(), 0, "a new day starts from zero");
    }
}
