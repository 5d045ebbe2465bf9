//! What the gate needs to know of the user's reactions, computed from the lifecycle log
//! and handed to the NudgePolicy (persisted with it, so every process gates alike).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Accepted and dismissed verdicts; neutral ones count in neither.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rate {
    pub accepted: u32,
    pub dismissed: u32,
}

impl Rate {
    pub fn samples(&self) -> u32 {
        self.accepted + self.dismissed
    }

    /// `None` without samples: no data is not a zero rate.
    pub fn acceptance(&self) -> Option<f64> {
        let n = self.samples();
        (n > 0).then(|| f64::from(self.accepted) / f64::from(n))
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TopicFeedback {
    pub rate: Rate,
    /// Decayed sum of reject weights (a hard reject weighs more than a dismissal).
    pub reject_weight: f64,
    pub last_reject: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FeedbackSummary {
    pub overall: Rate,
    pub high_priority: Rate,
    pub by_topic: HashMap<String, TopicFeedback>,
    /// By the local hour of day the nudge was dispatched (0–23).
    pub by_hour: Vec<Rate>,
    pub last_dismissal: Option<DateTime<Utc>>,
}

impl FeedbackSummary {
    pub fn hour(&self, h: u32) -> Rate {
        self.by_hour.get(h as usize).copied().unwrap_or_default()
    }
}
