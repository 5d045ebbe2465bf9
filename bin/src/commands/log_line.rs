//! One journal line as a person reads it: the local time, the kind, and a short text
//! (`14:02 gate      deny at layer 5 (hour_quota): 2 of 2 in the last hour — "Drink water"`),
//! sanitized for the terminal.

use chrono_tz::Tz;
use raven_actors::feedback::short_id;
use raven_actors::journal::{
    ConfigReload, CronFire, Delivery, DiscoveryRun, Entry, Event, Gate, HeartbeatRun, OutboxMove, Tick, VerdictGiven,
};
use raven_actors::text::sanitize;

/// How much of a reason or a message a line shows.
const SHOWN_CHARS: usize = 100;

/// Prints entries one a line, with a date line whenever the local day changes.
#[derive(Debug)]
pub struct Printer {
    tz: Tz,
    day: Option<chrono::NaiveDate>,
}

impl Printer {
    pub fn new(tz: Tz) -> Self {
        Printer { tz, day: None }
    }

    pub fn print(&mut self, e: &Entry) {
        let local = e.at.with_timezone(&self.tz);
        if self.day != Some(local.date_naive()) {
            self.day = Some(local.date_naive());
            println!("── {} ──", local.format("%a %Y-%m-%d"));
        }
        println!("{}", sanitize(&line(e, self.tz)));
    }
}

/// `14:02 delivery  [3fa2c1] call the bank → cli:local`.
pub fn line(e: &Entry, tz: Tz) -> String {
    let time = e.at.with_timezone(&tz).format("%H:%M");
    // A source that only repeats the kind (`heartbeat`, `discovery`, `config`) is not shown.
    let source = e.source.as_deref().filter(|s| *s != e.event.kind()).map(|s| format!(" ({s})")).unwrap_or_default();
    format!("{time} {:<9} {}{source}", e.event.kind(), text(&e.event))
}

fn text(event: &Event) -> String {
    match event {
        Event::Tick(t) => tick(t),
        Event::Gate(g) => gate(g),
        Event::Delivery(d) => delivery(d),
        Event::Outbox(o) => outbox(o),
        Event::Cron(c) => cron(c),
        Event::Verdict(v) => verdict(v),
        Event::Config(c) => config(c),
        Event::Heartbeat(h) => heartbeat(h),
        Event::Discovery(d) => discovery(d),
        Event::LlmUsage(u) => format!(
            "{}: {} prompt + {} completion tokens ({} today)",
            u.role, u.prompt_tokens, u.completion_tokens, u.day_total
        ),
    }
}

/// `ran → cli:local`, `skipped — the gate (layer 2): quiet hours`.
fn heartbeat(h: &HeartbeatRun) -> String {
    let why = h.reason.as_deref().map(cut).unwrap_or_default();
    match h.outcome.as_str() {
        "ran" if h.delivered_to.is_empty() => "ran, its reply reached nobody".to_owned(),
        "ran" => format!("ran → {}", h.delivered_to.join(", ")),
        "skipped" => format!("skipped — {why}"),
        other => format!("{other}: {why}"),
    }
}

/// `menu [3fa2c1] of 3 options sent (requested)`, `denied — layer 5: …`.
fn discovery(d: &DiscoveryRun) -> String {
    let what = match (d.outcome.as_str(), &d.menu_id) {
        ("sent", Some(id)) => format!("menu {} of {} options sent", tag(id), d.options.unwrap_or(0)),
        ("nothing_to_propose", _) => "nothing to propose".to_owned(),
        ("nothing_new", _) => "every option was offered lately: no menu".to_owned(),
        (other, _) => format!("{other} — {}", d.reason.as_deref().map(cut).unwrap_or_default()),
    };
    if d.requested {
        format!("{what} (requested)")
    } else {
        what
    }
}

/// `config.toml: applied cron.forward_channels; needs a restart: general.timezone`.
fn config(c: &ConfigReload) -> String {
    let mut parts = Vec::new();
    if let Some(e) = &c.error {
        parts.push(format!("not taken, the running config stays: {}", cut(e)));
    }
    if !c.applied.is_empty() {
        parts.push(format!("applied {}", c.applied.join(", ")));
    }
    if !c.needs_restart.is_empty() {
        parts.push(format!("needs a restart: {}", c.needs_restart.join(", ")));
    }
    format!("config.toml: {}", parts.join("; "))
}

fn tick(t: &Tick) -> String {
    match (t.outcome.as_str(), &t.fast_path, &t.nudge_id) {
        (_, Some(fast), _) => format!("fast path ({fast}): nothing to ask the planner"),
        ("delivered", _, Some(id)) => format!("{}: delivered {} → {}", t.route, tag(id), t.targets.join(", ")),
        ("skipped", _, _) => format!("{}: skipped — {}", t.route, cut(&t.reason)),
        ("denied", _, _) => format!("{}: {}", t.route, cut(t.error.as_deref().unwrap_or(&t.reason))),
        (outcome, _, _) => {
            let why = t.error.as_deref().unwrap_or(&t.reason);
            format!("{}: {outcome} — {}", t.route, cut(why))
        }
    }
}

fn gate(g: &Gate) -> String {
    let verdict = match (&g.layer, &g.layer_name) {
        (Some(n), Some(name)) if !g.allow => format!("deny at layer {n} ({name}): {}", cut(&g.reason)),
        _ if !g.allow => format!("deny: {}", cut(&g.reason)),
        _ => cut(&g.reason),
    };
    let step = if g.step == "check" { " [check]" } else { "" };
    format!("{verdict}{step} — \"{}\"", cut(&g.content))
}

fn delivery(d: &Delivery) -> String {
    let job = d.job.as_deref().map(|j| format!(" (job {j})")).unwrap_or_default();
    format!("{} {} → {}{job}", tag(&d.nudge_id), d.topic, d.target)
}

fn outbox(o: &OutboxMove) -> String {
    let id = o.nudge_id.as_deref().map(|id| format!(" {}", tag(id))).unwrap_or_default();
    let why = o.why.as_deref().map(|w| format!(": {}", cut(w))).unwrap_or_default();
    format!("{}{id} {} → {}{why}", o.step, o.delivery_id, o.target)
}

fn cron(c: &CronFire) -> String {
    match c.delivered_to.as_slice() {
        [] => format!("job {} fired, delivered nowhere yet", c.job),
        to => format!("job {} fired → {}", c.job, to.join(", ")),
    }
}

fn verdict(v: &VerdictGiven) -> String {
    let topic = v.topic.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    let reason = v.reason.as_deref().map(|r| format!(": {}", cut(r))).unwrap_or_default();
    format!("{} {}{topic}{reason}", tag(&v.nudge_id), v.verdict)
}

/// `[3fa2c1]`, the short id the cli outlet shows beside a message.
fn tag(nudge_id: &str) -> String {
    format!("[{}]", short_id(nudge_id))
}

fn cut(s: &str) -> String {
    let mut out: String = s.chars().take(SHOWN_CHARS).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}
