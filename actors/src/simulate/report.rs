//! The run's report: counts per local day and for the whole run, and the timeline's marks.
//! Only ordered maps and simulated times go in, so one scenario and seed always render the
//! same bytes.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Sentinel ticks run.
    pub ticks: u64,
    /// Sentinel nudges delivered (or queued, for `nudge_defer`), by action.
    pub nudges: BTreeMap<String, u64>,
    /// Sentinel nudges the gate denied, by layer (`layer 6 (session_cooldown)`).
    pub denials: BTreeMap<String, u64>,
    /// Sentinel nudges the router did not deliver, by why (the error up to its first `:`).
    pub failed: BTreeMap<String, u64>,
    /// Calls to an LLM, by who made them (`planner`, `heartbeat`, `user turn`, `cron turn`).
    pub llm_calls: BTreeMap<String, u64>,
    /// The same questions answered by the embedded rules (no LLM configured), by who asked.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules_calls: BTreeMap<String, u64>,
    /// Ticks that needed no planner call, by the path that answered instead.
    pub avoided: BTreeMap<String, u64>,
    pub cron_fires: u64,
    /// Of those, the fires that reached nobody (no target took the reminder).
    pub cron_failures: u64,
    pub heartbeat_runs: u64,
    pub heartbeat_skips: u64,
    pub user_messages: u64,
    pub verdicts: BTreeMap<String, u64>,
    /// What the outlets were handed, by channel.
    pub deliveries: BTreeMap<String, u64>,
    /// Rated proactive messages delivered, by topic.
    pub topics: BTreeMap<String, u64>,
    /// The adaptive multiplier after the day's last tick (`1.00` is the baseline).
    pub multiplier: String,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        let merge = |a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>| {
            for (k, v) in b {
                *a.entry(k.clone()).or_default() += v;
            }
        };
        self.ticks += o.ticks;
        merge(&mut self.nudges, &o.nudges);
        merge(&mut self.denials, &o.denials);
        merge(&mut self.failed, &o.failed);
        merge(&mut self.llm_calls, &o.llm_calls);
        merge(&mut self.rules_calls, &o.rules_calls);
        merge(&mut self.avoided, &o.avoided);
        self.cron_fires += o.cron_fires;
        self.cron_failures += o.cron_failures;
        self.heartbeat_runs += o.heartbeat_runs;
        self.heartbeat_skips += o.heartbeat_skips;
        self.user_messages += o.user_messages;
        merge(&mut self.verdicts, &o.verdicts);
        merge(&mut self.deliveries, &o.deliveries);
        merge(&mut self.topics, &o.topics);
        if !o.multiplier.is_empty() {
            self.multiplier = o.multiplier.clone();
        }
    }

    pub fn nudges_sent(&self) -> u64 {
        self.nudges.values().sum()
    }

    pub fn llm_total(&self) -> u64 {
        self.llm_calls.values().sum()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Day {
    /// The local date, `YYYY-MM-DD`.
    pub date: String,
    #[serde(flatten)]
    pub counts: Counts,
}

/// One event on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mark {
    pub at: String,
    /// Minutes since the start (the SVG's x).
    pub minute: i64,
    pub lane: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub scenario: String,
    pub start: String,
    pub end: String,
    pub timezone: String,
    pub seed: u64,
    pub tick_minutes: i64,
    pub provider: String,
    pub quiet_hours: String,
    pub days: Vec<Day>,
    pub total: Counts,
    /// What the run could not do as written (a verdict with no nudge to rate, …).
    pub notes: Vec<String>,
    pub marks: Vec<Mark>,
    /// Every event in the order it happened, each with its source, action, message id,
    /// topic and target.
    pub events: Vec<super::events::ReportEvent>,
}

fn map(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

fn counts(out: &mut String, c: &Counts) {
    let _ = writeln!(out, "  ticks:        {}", c.ticks);
    let _ = writeln!(out, "  nudges sent:  {} ({})", c.nudges_sent(), map(&c.nudges));
    let _ = writeln!(out, "  denied:       {} ({})", c.denials.values().sum::<u64>(), map(&c.denials));
    if !c.failed.is_empty() {
        let _ = writeln!(out, "  undelivered:  {} ({})", c.failed.values().sum::<u64>(), map(&c.failed));
    }
    let _ = writeln!(out, "  llm calls:    {} ({})", c.llm_total(), map(&c.llm_calls));
    if !c.rules_calls.is_empty() {
        let answered = c.rules_calls.values().sum::<u64>();
        let _ = writeln!(out, "  rules:        {answered} answered by the embedded rules ({})", map(&c.rules_calls));
    }
    let _ = writeln!(out, "  avoided:      {} ({})", c.avoided.values().sum::<u64>(), map(&c.avoided));
    let _ = writeln!(out, "  cron fires:   {} (reached nobody {})", c.cron_fires, c.cron_failures);
    let _ = writeln!(out, "  heartbeat:    {} ran, {} skipped", c.heartbeat_runs, c.heartbeat_skips);
    let _ = writeln!(out, "  user msgs:    {}", c.user_messages);
    let _ = writeln!(out, "  verdicts:     {}", map(&c.verdicts));
    let _ = writeln!(out, "  multiplier:   {}", if c.multiplier.is_empty() { "-" } else { &c.multiplier });
    let _ = writeln!(out, "  topics:       {}", map(&c.topics));
    let _ = writeln!(out, "  deliveries:   {}", map(&c.deliveries));
}

impl Report {
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "simulation `{}`", self.scenario);
        let _ = writeln!(out, "  from {} to {} ({})", self.start, self.end, self.timezone);
        let _ = writeln!(
            out,
            "  seed {}, a tick every {} min, provider {}, quiet hours {}",
            self.seed, self.tick_minutes, self.provider, self.quiet_hours
        );
        for d in &self.days {
            let _ = writeln!(out, "\n{}", d.date);
            counts(&mut out, &d.counts);
        }
        let _ = writeln!(out, "\ntotal");
        counts(&mut out, &self.total);
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}
