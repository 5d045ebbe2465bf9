//! The run: one engine on a manual clock, stepped from one due instant to the next (a
//! scenario event, a Sentinel tick, a cron job, the heartbeat), never sleeping. Each step
//! runs what the long-running loops would run at that instant, in a fixed order: the
//! scenario's events, cron, settled defers, the Sentinel tick, the heartbeat.

mod react;

use super::capture::{drain, Capture, Deliveries, Delivery};
use super::events::ReportEvent;
use super::report::{Counts, Day, Mark, Report};
use super::scenario::{Event, Plan};
use crate::clock::ManualClock;
use crate::config::RavenConfig;
use crate::cron::service::RunDue;
use crate::cron::store::JobsStore;
use crate::data_dir::DataDir;
use crate::engine::{Engine, Overrides};
use crate::feedback::NudgeFeedbackTracker;
use crate::heartbeat::{HeartbeatOutcome, HeartbeatTick};
use crate::llm::provider::{Counted, SharedProvider};
use crate::sentinel::{PollDeferred, Tick};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use raven_proto::{BusyPolicy, Origin, TickOutcome, TurnRequest};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// The engine config for `plan`: the defaults, the scenario's `[config]`, its time zone.
pub fn config_for(plan: &Plan) -> Result<RavenConfig, String> {
    let mut config = match &plan.config {
        None => RavenConfig::default(),
        Some(t) => {
            let text = toml::to_string(t).map_err(|e| format!("[config]: {e}"))?;
            RavenConfig::parse(&text, std::path::Path::new("[config]")).map(|(c, _)| c).map_err(|e| e.to_string())?
        }
    };
    config.general.timezone = plan.tz;
    Ok(config)
}

struct Sim<'a> {
    plan: &'a Plan,
    engine: Engine,
    clock: ManualClock,
    calls: Rc<Cell<u64>>,
    seen: Deliveries,
    tracker: NudgeFeedbackTracker,
    dir: DataDir,
    days: BTreeMap<NaiveDate, Counts>,
    marks: Vec<Mark>,
    notes: Vec<String>,
    last_nudge: Option<String>,
    turns: u64,
    /// The scripted user's answers waiting for their time.
    pending: Vec<react::Pending>,
    /// The scripted user's messages, for the report's event list.
    user_events: Vec<ReportEvent>,
}

/// Runs `plan` in `dir` (a fresh data dir) with `provider` (the rules when `None`).
pub async fn run(plan: &Plan, dir: &DataDir, provider: Option<SharedProvider>) -> Result<Report, String> {
    let config = config_for(plan)?;
    dir.ensure().map_err(|e| format!("data dir {}: {e}", dir.root().display()))?;
    let write =
        |p: std::path::PathBuf, text: &str| std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()));
    write(dir.memory(), &plan.memory)?;
    if let Some(h) = &plan.heartbeat {
        write(dir.heartbeat(), h)?;
    }
    if let Some(ics) = &plan.calendar_ics {
        write(dir.workspace().join("calendar.ics"), ics)?;
    }
    if !plan.jobs.is_empty() {
        JobsStore::new(dir.jobs()).update(|f| f.jobs = plan.jobs.clone()).map_err(|e| e.to_string())?;
    }
    let clock = ManualClock::new(plan.start);
    let inner = provider.unwrap_or_else(|| Rc::new(crate::planner::rules::RulesProvider::new(plan.tz)));
    let (counted, calls) = Counted::new(inner);
    let seen: Deliveries = Arc::new(Mutex::new(Vec::new()));
    let outlets: Vec<Arc<dyn crate::delivery::outlets::Outlet>> = ["cli", "jsonl", "webhook"]
        .iter()
        .map(|c| Arc::new(Capture::new(c, clock.shared(), seen.clone())) as Arc<dyn crate::delivery::outlets::Outlet>)
        .collect();
    let overrides = Overrides { provider: Some(Rc::new(counted)), outlets, ..Default::default() };
    let engine = Engine::start_with(dir, &config, clock.shared(), overrides).map_err(|e| e.to_string())?;
    // The scripted verdicts are journal lines too, as a user's are.
    let tracker = NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), plan.tz)
        .with_journal(crate::journal::Journal::in_data_dir(dir));
    let mut sim = Sim {
        plan,
        engine,
        clock,
        calls,
        seen,
        tracker,
        dir: dir.clone(),
        days: BTreeMap::new(),
        marks: Vec::new(),
        notes: Vec::new(),
        last_nudge: None,
        turns: 0,
        pending: Vec::new(),
        user_events: Vec::new(),
    };
    sim.steps(&config).await;
    Ok(sim.report(&config))
}

impl Sim<'_> {
    fn day(&mut self, at: DateTime<Utc>) -> &mut Counts {
        self.days.entry(at.with_timezone(&self.plan.tz).date_naive()).or_default()
    }

    fn mark(&mut self, at: DateTime<Utc>, lane: &str, label: impl Into<String>) {
        let minute = (at - self.plan.start).num_minutes();
        self.marks.push(Mark { at: at.to_rfc3339(), minute, lane: lane.into(), label: label.into() });
    }

    /// Counts the provider calls made since `before` against `who`, on `at`'s day.
    /// An LLM call, or one the embedded rules answered (no model was asked).
    fn calls_since(&mut self, before: u64, at: DateTime<Utc>, who: &str) {
        let n = self.calls.get() - before;
        let rules = self.engine.provider_name == "rules";
        if n > 0 {
            let day = self.day(at);
            let calls = if rules { &mut day.rules_calls } else { &mut day.llm_calls };
            *calls.entry(who.into()).or_default() += n;
        }
    }

    async fn steps(&mut self, config: &RavenConfig) {
        let plan = self.plan;
        let hb_every = Duration::seconds(config.heartbeat.interval_s.max(1) as i64);
        let hb_on = config.heartbeat.enabled;
        let (mut next_tick, mut next_hb) = (plan.start, plan.start + hb_every);
        let mut cron_next = Some(plan.start);
        let mut ev = 0;
        let mut prev: Option<DateTime<Utc>> = None;
        loop {
            let mut t = next_tick;
            if let Some((at, _)) = plan.events.get(ev) {
                t = t.min(*at);
            }
            if let Some(c) = cron_next {
                t = t.min(c);
            }
            if let Some(r) = self.next_reaction() {
                t = t.min(r);
            }
            if hb_on {
                t = t.min(next_hb);
                if let Some(w) = self.engine.wake.next_due() {
                    t = t.min(w);
                }
            }
            // Always forward: a timer that is due again at once waits for the next second.
            if let Some(p) = prev {
                t = t.max(p + Duration::seconds(1));
            }
            if t >= plan.end {
                break;
            }
            prev = Some(t);
            self.clock.set(t);
            while let Some((at, e)) = plan.events.get(ev).filter(|(at, _)| *at <= t) {
                self.event(*at, e.clone()).await;
                ev += 1;
            }
            self.react_due(t).await;
            self.clock.set(t);
            cron_next = self.cron(t).await;
            if t >= next_tick {
                self.tick(t).await;
                next_tick += plan.tick;
            }
            if hb_on {
                let woken = self.engine.wake.take_due(t, self.engine.wake.user_busy()).is_some();
                if woken || t >= next_hb {
                    self.heartbeat(t).await;
                    next_hb = t + hb_every;
                }
            }
            self.deliveries();
        }
        self.deliveries();
    }

    async fn event(&mut self, at: DateTime<Utc>, e: Event) {
        self.clock.set(at);
        match e {
            Event::Calendar { line } => {
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
                self.mark(at, "calendar", line.clone());
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
    async fn user_turn(&mut self, at: DateTime<Utc>, session: &str, text: &str) {
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

    async fn cron(&mut self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let cron = self.engine.cron.clone()?;
        let before = self.calls.get();
        let run = cron.call_async(RunDue).await.ok()?;
        self.calls_since(before, t, "cron turn");
        if let Some(e) = &run.error {
            self.notes.push(format!("{}: cron: {e}", t.to_rfc3339()));
        }
        for f in &run.fired {
            let id = stable_job_id(&f.job_id);
            match &f.result {
                Ok(_) => {
                    self.day(t).cron_fires += 1;
                    self.mark(t, "cron", id.clone());
                }
                Err(e) => {
                    self.day(t).cron_failures += 1;
                    self.mark(t, "cron", format!("{id} failed: {e}"));
                }
            }
            if let Some(why) = &f.paused {
                self.notes.push(format!("{}: cron job `{id}` paused: {why}", t.to_rfc3339()));
            }
        }
        run.next_wake
    }

    async fn tick(&mut self, t: DateTime<Utc>) {
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

    async fn heartbeat(&mut self, t: DateTime<Utc>) {
        let before = self.calls.get();
        let outcome = self.engine.heartbeat.call_async(HeartbeatTick).await;
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

    fn deliveries(&mut self) {
        for Delivery { at, channel, chat_id, proactive, content, nudge_id } in drain(&self.seen) {
            *self.day(at).deliveries.entry(channel.clone()).or_default() += 1;
            if let Some(id) = &nudge_id {
                self.schedule_reaction(at, format!("{channel}:{chat_id}"), id);
            }
            let kind = if proactive { "proactive" } else { "reply" };
            self.mark(at, "delivery", format!("{channel}:{chat_id} ({kind}): {content}"));
        }
    }

    fn report(mut self, config: &RavenConfig) -> Report {
        let plan = self.plan;
        self.count_verdicts();
        // Every local day of the run is listed, even a quiet one.
        let (first, last) = (local_date(plan, plan.start), local_date(plan, plan.end - Duration::seconds(1)));
        let mut d = first;
        while d <= last {
            self.days.entry(d).or_default();
            match d.succ_opt() {
                Some(next) => d = next,
                None => break,
            }
        }
        let mut total = Counts::default();
        let days = self
            .days
            .iter()
            .map(|(date, c)| {
                total.add(c);
                Day { date: date.to_string(), counts: c.clone() }
            })
            .collect();
        let mut marks = std::mem::take(&mut self.marks);
        marks.sort_by(|a, b| {
            a.minute.cmp(&b.minute).then_with(|| a.lane.cmp(&b.lane)).then_with(|| a.label.cmp(&b.label))
        });
        let q = &config.policy.quiet_hours;
        let events = self.events();
        Report {
            scenario: plan.name.clone(),
            start: plan.start.with_timezone(&plan.tz).to_rfc3339(),
            end: plan.end.with_timezone(&plan.tz).to_rfc3339(),
            timezone: plan.tz.name().to_owned(),
            seed: plan.seed,
            tick_minutes: plan.tick.num_minutes(),
            provider: self.engine.provider_name.clone(),
            quiet_hours: format!("{}-{}", q.start.0.format("%H:%M"), q.end.0.format("%H:%M")),
            days,
            total,
            notes: self.notes,
            marks,
            events,
        }
    }

    /// The journal's events and the user's messages, in the order they happened (a user's
    /// message before what it caused at the same instant).
    fn events(&mut self) -> Vec<ReportEvent> {
        let lines = crate::journal::read_all(&self.dir.journal()).ok().flatten().unwrap_or_default();
        let entries: Vec<crate::journal::Entry> = lines.iter().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let mut events = std::mem::take(&mut self.user_events);
        events.extend(super::events::from_journal(&entries));
        events.sort_by_key(|e| chrono::DateTime::parse_from_rfc3339(&e.at).ok());
        for e in &mut events {
            e.detail = e.detail.take().map(|d| stable_job_id(&d));
            e.nudge_id = e.nudge_id.take().map(|id| stable_nudge_id(&id));
        }
        events
    }
}

fn local_date(plan: &Plan, t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&plan.tz).date_naive()
}

/// `denied at layer 6 (session_cooldown): …` → `layer 6 (session_cooldown)`.
pub fn denied_layer(error: &str) -> Option<String> {
    let rest = error.strip_prefix("denied at ")?;
    let layer = rest.split_once(':').map_or(rest, |(l, _)| l).trim();
    Some(if layer.is_empty() { "unknown layer".into() } else { layer.to_owned() })
}

/// An id (`n-<time>-<pid>-<seq>`, `heartbeat-<pid>-<ms>-<seq>`) without this process's id,
/// which differs per run.
pub fn stable_nudge_id(id: &str) -> String {
    let pid = format!("-{}-", std::process::id());
    id.replacen(&pid, "-", 1)
}

/// A job the agent made (`job-<time>-<pid>`) without the process id, which differs per run.
pub fn stable_job_id(id: &str) -> String {
    match id.rsplit_once('-') {
        Some((head, pid)) if head.starts_with("job-") && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_owned()
        }
        _ => id.to_owned(),
    }
}
