//! The morning brief, from the tick's chores: once a local day, from `[brief] at` (the end
//! of quiet hours by default), one message with the day's items when there are any (nothing
//! on an empty day; a topic the user muted is left out). It passes the gate as one nudge; denied, or with nothing to say yet, it
//! is tried again on the later ticks of its first four hours. Each item is recorded as a message of its own (see
//! [`crate::delivery::conversation`]), and the dated items it said count as told for the
//! rest of their heads-up window, for the Planner and the next days' briefs (an item's own
//! reminder, in its last hour, still comes).

use super::*;
use crate::context::brief;
use crate::context::deadlines::Deadline;
use crate::feedback::BriefItem;
use crate::sentinel::decision_cache::Briefed;
use raven_proto::Priority;

/// How long after its time a brief the gate held back is still tried.
const TRIED_FOR: Duration = Duration::hours(4);

/// How many dismissals of a kind's early heads-ups shorten its ladder to the day before.
pub const DISMISSED_KINDS: u32 = 3;

/// How long a heads-up said in a brief is remembered.
const TOLD_KEPT: Duration = Duration::days(35);

impl SentinelRunner {
    /// A brief at `from` local, kept in `cache` (tests build the runner without them).
    #[cfg(test)]
    pub(crate) fn set_brief(&mut self, from: crate::config::TimeOfDay, cache: DecisionCache) {
        self.d.brief = Some(from);
        self.cache = cache;
    }

    /// The heads-ups the briefs said count as nudged, in what the Planner reads.
    pub(super) fn add_briefed(&mut self, ctx: &mut PlannerContext) {
        if self.briefed.is_none() {
            self.briefed = Some(self.cache.briefed().unwrap_or_default());
        }
        for (topic, at) in self.briefed.iter().flat_map(|b| &b.told) {
            let h = ctx.fire_history.entry(topic.clone()).or_default();
            h.last_fired = h.last_fired.max(Some(*at));
        }
    }

    /// Sends the day's brief when its time has come and no process sent it today.
    pub(super) async fn maybe_brief(
        &mut self,
        ctx: &PlannerContext,
        deadlines: &[Deadline],
        feedback: &FeedbackSummary,
        lang: Language,
    ) {
        let Some(from) = self.d.brief else { return };
        let (now, tz) = (ctx.now, self.d.tz);
        let local = now.with_timezone(&tz);
        let today = local.date_naive();
        if local.time() < from.0 || self.briefed.as_ref().is_some_and(|b| b.day == Some(today)) {
            return;
        }
        let late = local.naive_local() - today.and_time(from.0) > TRIED_FOR;
        let mut items = brief::items(now, tz, deadlines, &ctx.routines, &ctx.fire_history, lang);
        // A topic the user stopped stays out of the brief as out of any nudge.
        items.retain(|i| feedback.muted_until(&i.topic, now).is_none());
        // Nothing to say yet (routines alone get their own nudge at their hour): no need to
        // read what the other processes did.
        if !brief::says_something(&items) && !late {
            return;
        }
        let mut briefed = self.cache.briefed().unwrap_or_default();
        if briefed.day == Some(today) {
            self.briefed = Some(briefed);
            return;
        }
        if late {
            self.close_day(&mut briefed, today, now);
            return;
        }
        let items = self.shorten_dismissed_kinds(items, feedback, &mut briefed, now);
        if !brief::says_something(&items) {
            return;
        }
        let outcome = self.send_brief(ctx, &items, lang).await;
        self.journal.record(now, Some("brief"), Event::tick(&outcome));
        self.brief_sent = Some(outcome.clone());
        // Sent, or kept in the outbox (which sends it when the channel is back): done today.
        if outcome.nudge_id.is_some() || outcome.result.as_ref().is_some_and(|r| r.queued) {
            // Its dated items were told (a routine keeps its own nudge at its hour).
            let dated = items.iter().filter(|i| i.part != brief::Part::Routine);
            briefed.told.extend(dated.map(|i| (i.topic.clone(), now)));
            self.close_day(&mut briefed, today, now);
        }
    }

    /// The learner: a kind whose early heads-ups the user dismissed [`DISMISSED_KINDS`] times
    /// gets the day before only. Its early items leave the brief and count as told (no
    /// heads-up of their own either); the day before, they come as any other.
    fn shorten_dismissed_kinds(
        &mut self,
        items: Vec<brief::Item>,
        feedback: &FeedbackSummary,
        briefed: &mut Briefed,
        now: DateTime<Utc>,
    ) -> Vec<brief::Item> {
        let dismissed = |k: crate::time::Need| feedback.dismissed_kinds.get(k.name()).copied().unwrap_or(0);
        let (early, kept): (Vec<_>, Vec<_>) =
            items.into_iter().partition(|i| i.kind.is_some_and(|k| dismissed(k) >= DISMISSED_KINDS));
        if !early.is_empty() {
            briefed.told.extend(early.iter().map(|i| (i.topic.clone(), now)));
            self.cache.save_briefed(briefed);
            self.briefed = Some(briefed.clone());
        }
        kept
    }

    /// The day is done: kept for every process, with the heads-ups told in the last weeks.
    fn close_day(&mut self, briefed: &mut Briefed, today: chrono::NaiveDate, now: DateTime<Utc>) {
        briefed.day = Some(today);
        briefed.told.retain(|_, at| now - *at < TOLD_KEPT);
        self.cache.save_briefed(briefed);
        self.briefed = Some(briefed.clone());
    }

    /// The draft in the model's words (with the rules: the draft itself); any failure keeps
    /// the draft.
    async fn worded(&self, draft: String, items: usize) -> String {
        let asked = self.d.planner.call_async(crate::planner::brief::WordBrief { draft: draft.clone(), items });
        match asked.await {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => {
                tracing::warn!("the morning brief keeps the rules' words: {e}");
                draft
            }
            Err(e) => {
                tracing::warn!("the morning brief keeps the rules' words, the planner is unavailable: {e}");
                draft
            }
        }
    }

    /// The brief through the gate as one nudge, its items recorded with it.
    async fn send_brief(&mut self, ctx: &PlannerContext, items: &[brief::Item], lang: Language) -> TickOutcome {
        let now = ctx.now;
        let text = self.worded(brief::render(items, now, self.d.tz, lang), items.len()).await;
        let reason = format!("morning brief: {} item(s)", items.len());
        let mut decision = PlannerDecision::with_message(Action::Nudge, text, reason);
        decision.priority = Priority::Medium;
        decision.proactivity_score = 1.0;
        decision.target_session =
            raven_proto::planner_context::latest_private(&ctx.active_sessions).map(|s| s.session_key.clone());
        // Item `n` is `<brief>.<n>`: `/later 2` finds it from the conversation's latest brief.
        let id = self.next_nudge_id(now);
        let said = Dispatch {
            nudge_id: id.clone(),
            topic: brief::TOPIC.to_owned(),
            priority: Priority::Medium,
            source: Source::Sentinel,
            job: None,
            items: (1..)
                .zip(items)
                .map(|(n, i)| BriefItem {
                    nudge_id: format!("{id}.{n}"),
                    topic: i.topic.clone(),
                    text: i.text.clone(),
                    kind: i.kind.map(|k| k.name().to_owned()),
                })
                .collect(),
        };
        self.route_said(decision, Some(brief::TOPIC.to_owned()), said, Path::ScheduledFire, Vec::new()).await
    }
}
