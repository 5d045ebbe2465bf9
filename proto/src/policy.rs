//! The NudgePolicy verdict (spec §5): which layer decided, and why.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The layers of the gate, in the order `check()` runs them (spec §5 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum PolicyLayer {
    /// 1: action == skip.
    Skip,
    /// 2: quiet hours.
    QuietHours,
    /// 2b: per-hour do-not-disturb learned from feedback.
    DynamicDnd,
    /// 3: per-persona do-not-disturb windows.
    PersonaDnd,
    /// 4: per-day quota (hard cap).
    DayQuota,
    /// 5: per-hour quota, scaled by the adaptive and weekend multipliers.
    HourQuota,
    /// 6: per-session cooldown.
    SessionCooldown,
    /// 7: cooldown after a dismissal.
    DismissalCooldown,
    /// 8: per-topic weighted hard-reject cooldown.
    TopicRejectCooldown,
    /// 9: per-topic acceptance-rate gate.
    TopicAcceptance,
    /// 10: content de-duplication within a window.
    ContentDedup,
    /// 11: rolling per-topic quota stack (hour / day / week).
    TopicQuota,
}

impl PolicyLayer {
    pub const ALL: [PolicyLayer; 12] = [
        PolicyLayer::Skip,
        PolicyLayer::QuietHours,
        PolicyLayer::DynamicDnd,
        PolicyLayer::PersonaDnd,
        PolicyLayer::DayQuota,
        PolicyLayer::HourQuota,
        PolicyLayer::SessionCooldown,
        PolicyLayer::DismissalCooldown,
        PolicyLayer::TopicRejectCooldown,
        PolicyLayer::TopicAcceptance,
        PolicyLayer::ContentDedup,
        PolicyLayer::TopicQuota,
    ];

    /// The number in the spec's table.
    pub fn number(self) -> &'static str {
        match self {
            PolicyLayer::Skip => "1",
            PolicyLayer::QuietHours => "2",
            PolicyLayer::DynamicDnd => "2b",
            PolicyLayer::PersonaDnd => "3",
            PolicyLayer::DayQuota => "4",
            PolicyLayer::HourQuota => "5",
            PolicyLayer::SessionCooldown => "6",
            PolicyLayer::DismissalCooldown => "7",
            PolicyLayer::TopicRejectCooldown => "8",
            PolicyLayer::TopicAcceptance => "9",
            PolicyLayer::ContentDedup => "10",
            PolicyLayer::TopicQuota => "11",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PolicyLayer::Skip => "skip",
            PolicyLayer::QuietHours => "quiet_hours",
            PolicyLayer::DynamicDnd => "dynamic_dnd",
            PolicyLayer::PersonaDnd => "persona_dnd",
            PolicyLayer::DayQuota => "day_quota",
            PolicyLayer::HourQuota => "hour_quota",
            PolicyLayer::SessionCooldown => "session_cooldown",
            PolicyLayer::DismissalCooldown => "dismissal_cooldown",
            PolicyLayer::TopicRejectCooldown => "topic_reject_cooldown",
            PolicyLayer::TopicAcceptance => "topic_acceptance",
            PolicyLayer::ContentDedup => "content_dedup",
            PolicyLayer::TopicQuota => "topic_quota",
        }
    }

    /// The spec's "High priority can bypass?" column. Quiet hours' bypass can itself be
    /// withdrawn at run time (low high-priority acceptance); that is the policy's call.
    pub fn high_priority_may_bypass(self) -> bool {
        matches!(
            self,
            PolicyLayer::QuietHours | PolicyLayer::DynamicDnd | PolicyLayer::PersonaDnd | PolicyLayer::HourQuota
        )
    }

    /// Whether it holds back an answer the user asked for (a menu pick): only an action of
    /// skip and the same content twice within the dedup window do.
    pub fn applies_to_solicited(self) -> bool {
        matches!(self, PolicyLayer::Skip | PolicyLayer::ContentDedup)
    }
}

impl fmt::Display for PolicyLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "layer {} ({})", self.number(), self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub allow: bool,
    /// The layer that denied; `None` when allowed.
    pub layer: Option<PolicyLayer>,
    pub reason: String,
    /// Layers a high-priority request was let through although they would have denied.
    pub bypassed: Vec<PolicyLayer>,
}

impl Verdict {
    pub fn allow(bypassed: Vec<PolicyLayer>) -> Self {
        let reason = if bypassed.is_empty() {
            "allowed".to_owned()
        } else {
            let names: Vec<_> = bypassed.iter().map(|l| l.name()).collect();
            format!("allowed (high priority bypassed {})", names.join(", "))
        };
        Verdict { allow: true, layer: None, reason, bypassed }
    }

    pub fn deny(layer: PolicyLayer, reason: impl Into<String>) -> Self {
        Verdict { allow: false, layer: Some(layer), reason: reason.into(), bypassed: Vec::new() }
    }
}
