//! The run: one engine on a manual clock, stepped from one due instant to the next (a
//! scenario event, a Sentinel tick, a cron job, the heartbeat), never sleeping. Each step
//! runs what the long-running loops would run at that instant, in a fixed order: the
//! scenario's events, cron, settled defers, the Sentinel tick, the heartbeat.
//!
//! Here: the run's state and its loop over due instants. What each step does is in `steps`, the
//! scripted user in `react`, the report in `summary`, and run-independent ids in `ids`.

mod ids;
mod react;
mod steps;
mod summary;

use super::capture::{Capture, Deliveries};
use super::events::ReportEvent;
use super::report::{Counts, Mark, Report};
use super::scenario::Plan;
use crate::clock::ManualClock;
use crate::config::RavenConfig;
use crate::cron::store::JobsStore;
use crate::data_dir::DataDir;
use crate::engine::{Engine, Overrides};
use crate::feedback::NudgeFeedbackTracker;
use crate::llm::decorator::Counted;
use crate::llm::provider::SharedProvider;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

pub use ids::{stable_job_id, Renumber};
pub use steps::denied_layer;

/// The engine config for `plan`: the defaults, the scenario's `[config]`, its time zone.
// A `String` error: what `raven simulate` prints about its scenario, read by a person.
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

/// The quiet hours the gate keeps in this scenario: the config's, widened by those the notes'
/// preferences ask for (`- quiet hours: 22:30-06:00` makes 23:00-07:00 into 22:30-07:00).
pub fn quiet_hours(plan: &Plan, config: &RavenConfig) -> crate::config::Window {
    let (asked, _) = crate::context::preferences::memory_md::parse_memory_md(&plan.memory);
    crate::policy::overrides::tighten(&config.policy, &asked).0.quiet_hours
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
// A `String` error: what `raven simulate` prints about its scenario, read by a person.
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
    let rules = crate::planner::rules::RulesProvider::of_config(&config);
    let inner = provider.unwrap_or_else(|| Rc::new(rules));
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
}
