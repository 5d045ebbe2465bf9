//! What one step of the run does, part by part: a scenario event (a calendar line, the user's
//! message, a verdict), the due cron jobs, the Sentinel tick with the defers it settles, the
//! heartbeat, and the deliveries the outlets captured, each counted on its day and marked on
//! the timeline.

use super::{stable_job_id, Sim};
use crate::cron::service::RunDue;
use crate::heartbeat::{HeartbeatOutcome, IntervalTick};
use crate::sentinel::{PollDeferred, Tick};
use crate::simulate::capture::{drain, Delivery};
use crate::simulate::events::ReportEvent;
use crate::simulate::scenario::Event;
use chrono::{DateTime, Utc};
use raven_proto::{BusyPolicy, Origin, TickOutcome, TurnRequest};

impl Sim<'_> {
    pub(super) async fn event(&mut self, at: DateTime<Utc>, e: Event) {
        self.clock.set(at);
        match e {
            Event::Calendar { line, starts } => {
                let path = self.dir.memory();
                let mut text = std::fs::read_to_string(&path).unwrap_or_default();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&line);
                text.push('\n');
                if let Err(e) = std::fs::write(&path, text) {
                    self.notes.push(format!("{}: calendar entry not written: {e}", at.to_rfc3339()));
                }
                // Drawn when it happens; when it was written down is in its label.
                if starts < self.plan.end {
                    let written = at.with_timezone(&self.plan.tz).format("%a %H:%M");
                    self.mark(starts, "calendar", format!("{line} (in the notes from {written})"));
                }
            }
            Event::Message { session, text } => self.user_turn(at, &session, &text).await,
            Event::Verdict { verdict } => {
                let Some(id) = self.last_nudge.clone() else {
                    self.notes.push(format!("{}: `{verdict}` had no nudge to rate", at.to_rfc3339()));
                    return;
                };
                match self.tracker.record_verdict(&id, &verdict, "scenario", at) {
                    Ok(_) => self.mark(at, "feedback", verdict),
                    Err(e) => self.notes.push(format!("{}: `{verdict}` not recorded: {e}", at.to_rfc3339())),
                }
            }
        }
    }

    /// A message the user writes in `session`: a turn like any channel's.
    pub(super) async fn user_turn(&mut self, at: DateTime<Utc>, session: &str, text: &str) {
        self.turns += 1;
        let (channel, chat_id) = raven_proto::split_target(session);
        let id = format!("sim-user-{}", self.turns);
        let req = TurnRequest::new(id, Origin::User, session, channel, chat_id, text, BusyPolicy::Append, at);
        let before = self.calls.get();
        let (_, reply) = self.engine.scheduler.submit_wait(req);
        let _ = reply.await;
        self.calls_since(before, at, "user turn");
        self.day(at).user_messages += 1;
        self.user_events.push(ReportEvent::user_message(at, session));
        self.mark(at, "user", format!("{session}: {text}"));
    }

    pub(super) async fn cron(&mut self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let cron = self.engine.cron.clone()?;
        let before = self.calls.get();
        let run = cron.call_async(RunDue).await.ok()?;
        self.calls_since(before, t, "cron turn");
        if let Some(e) = &run.error {
            self.notes.push(format!("{}: cron: {e}", t.to_rfc3339()));
        }
        for f in &run.fired {
            let id = stable_job_id(&f.job_id);
            self.day(t).cron_fires += 1;
            if f.result.delivered_to.is_empty() {
                self.day(t).cron_failures += 1;
                self.mark(t, "cron", format!("{id} reached nobody"));
            } else {
                self.mark(t, "cron", id.clone());
            }
            if let Some(why) = &f.paused {
                self.notes.push(format!("{}: cron job `{id}` paused: {why}", t.to_rfc3339()));
            }
        }
        run.next_wake
    }

    pub(super) async fn tick(&mut self, t: DateTime<Utc>) {
        let before = self.calls.get();
        let deferred = self.engine.runner.call_async(PollDeferred).await.unwrap_or_default();
        for o in &deferred {
            self.outcome(t, o, true);
        }
        match self.engine.runner.call_async(Tick).await {
            Ok(o) => {
                self.day(t).ticks += 1;
                self.outcome(t, &o, false);
                if let Ok(s) = self.engine.policy.call(crate::policy::Snapshot).await {
                    self.day(t).multiplier = format!("{:.2}", s.state.adaptive_multiplier);
                }
            }
            Err(e) => self.notes.push(format!("{}: tick failed: {e}", t.to_rfc3339())),
        }
        self.calls_since(before, t, "planner");
    }

    fn outcome(&mut self, t: DateTime<Utc>, o: &TickOutcome, released: bool) {
        if let Some(brief) = &o.brief {
            self.outcome(t, brief, false);
        }
        let avoided = match o.route.to_string().as_str() {
            "fast_path_skip" => Some(o.decision.reason.trim_start_matches("fast_path:").to_owned()),
            "scheduled_fire" => Some("scheduled_fire".to_owned()),
            _ => None,
        };
        if let Some(path) = avoided {
            *self.day(t).avoided.entry(path).or_default() += 1;
        }
        let Some(r) = &o.result else { return };
        let action = if released { "nudge_defer (released)".to_owned() } else { o.decision.action.to_string() };
        if r.delivered {
            *self.day(t).nudges.entry(action.clone()).or_default() += 1;
            self.last_nudge = o.nudge_id.clone().or(self.last_nudge.take());
            let what = o.decision.nudge_message.clone().unwrap_or_default();
            self.mark(t, "sentinel", format!("{action}: {what}"));
        } else if let Some(layer) = r.error.as_deref().and_then(denied_layer) {
            *self.day(t).denials.entry(layer.clone()).or_default() += 1;
            self.mark(t, "denied", format!("{action} denied at {layer}"));
        } else {
            let why = r.error.as_deref().unwrap_or("not delivered");
            let why = why.trim().to_owned();
            *self.day(t).failed.entry(why).or_default() += 1;
        }
    }

    pub(super) async fn heartbeat(&mut self, t: DateTime<Utc>) {
        let before = self.calls.get();
        let outcome = self.engine.heartbeat.call_async(IntervalTick).await;
        self.calls_since(before, t, "heartbeat");
        match outcome {
            Ok(HeartbeatOutcome::Ran { .. }) => {
                self.day(t).heartbeat_runs += 1;
                self.mark(t, "heartbeat", "ran");
            }
            Ok(HeartbeatOutcome::Skipped { .. }) => self.day(t).heartbeat_skips += 1,
            Ok(HeartbeatOutcome::Failed(e)) => self.notes.push(format!("{}: heartbeat failed: {e}", t.to_rfc3339())),
            Err(e) => self.notes.push(format!("{}: heartbeat failed: {e}", t.to_rfc3339())),
        }
    }

    pub(super) fn deliveries(&mut self) {
        for Delivery { at, channel, chat_id, proactive, content, nudge_id } in drain(&self.seen) {
            *self.day(at).deliveries.entry(channel.clone()).or_default() += 1;
            if let Some(id) = &nudge_id {
                self.schedule_reaction(at, format!("{channel}:{chat_id}"), id);
            }
            let kind = if proactive { "proactive" } else { "reply" };
            self.mark(at, "delivery", format!("{channel}:{chat_id} ({kind}): {content}"));
        }
    }
}

/// `denied at layer 6 (session_cooldown): …` → `layer 6 (session_cooldown)`.
pub fn denied_layer(error: &str) -> Option<String> {
    let rest = error.strip_prefix("denied at ")?;
    let layer = rest.split_once(':').map_or(rest, |(l, _)| l).trim();
    Some(if layer.is_empty() { "unknown layer".into() } else { layer.to_owned() })
}
