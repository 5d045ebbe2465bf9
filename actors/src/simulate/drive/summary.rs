//! The run's report: every local day's counts (a quiet day too) and their total, the
//! timeline's marks in order, and the events of the journal and the scripted user.

use super::{stable_job_id, Renumber, Sim};
use crate::config::RavenConfig;
use crate::simulate::events::ReportEvent;
use crate::simulate::report::{Counts, Day, Report};
use crate::simulate::scenario::Plan;
use chrono::{DateTime, Duration, NaiveDate, Utc};

impl Sim<'_> {
    pub(super) fn report(mut self, config: &RavenConfig) -> Report {
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
        let q = &super::quiet_hours(plan, config);
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
        events.extend(crate::simulate::events::from_journal(&entries));
        events.sort_by_key(|e| chrono::DateTime::parse_from_rfc3339(&e.at).ok());
        let mut ids = Renumber::default();
        for e in &mut events {
            e.detail = e.detail.take().map(|d| stable_job_id(&d));
            e.nudge_id = e.nudge_id.take().map(|id| ids.id(&id));
        }
        events
    }
}

fn local_date(plan: &Plan, t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&plan.tz).date_naive()
}
