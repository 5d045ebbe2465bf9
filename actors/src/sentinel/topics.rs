//! The topic a Planner's decision is filed under when it names none: the topic of a routine,
//! a deadline or a calendar event its message speaks of, so "It's about the time you usually
//! handle water" is about `water` (what the user mutes, the gate counts and the feedback
//! rates), not about its longest word. Otherwise the message's own topic.

use crate::context::deadlines::deadlines_in;
use crate::time::DateOrder;
use chrono_tz::Tz;
use raven_proto::{PlannerContext, PlannerDecision};

/// The known topic the decision's message mentions, if any.
pub fn known_topic(d: &PlannerDecision, ctx: &PlannerContext, tz: Tz, order: DateOrder) -> Option<String> {
    let text = d.nudge_message.as_deref().or(d.spawn_task.as_deref())?.to_lowercase();
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| crate::policy::topic::stem(w).to_owned())
        .collect();
    let mentioned = |topic: &str| words.iter().any(|w| w == topic);
    let routines = ctx.routines.iter().map(|r| r.topic.clone());
    let dated = deadlines_in(ctx, tz, order, &Default::default()).into_iter().map(|d| d.topic);
    routines.chain(dated).find(|t| mentioned(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use raven_proto::{Action, Routine};

    #[test]
    fn a_routine_nudge_is_about_its_routine_not_its_longest_word() {
        let mut ctx = PlannerContext::empty(chrono::Utc::now());
        ctx.routines = vec![Routine { topic: "water".into(), hour: 15, days_seen: 3, days: Default::default() }];
        let d = PlannerDecision::with_message(Action::Nudge, "It's about the time you usually handle water.", "r");
        assert_eq!(known_topic(&d, &ctx, Tz::UTC, DateOrder::default()).as_deref(), Some("water"));
        let other = PlannerDecision::with_message(Action::Nudge, "Time to stretch your legs", "r");
        assert_eq!(known_topic(&other, &ctx, Tz::UTC, DateOrder::default()), None);
    }
}
