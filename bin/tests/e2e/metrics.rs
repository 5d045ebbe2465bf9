//! `raven metrics` from outside, with no LLM: after a tick that nudges and one the gate holds
//! back, the output parses as Prometheus text line by line, carries the event counters and
//! the outbox gauges, and has every metric the Grafana dashboard queries.

use crate::support;

use prometheus_parse::{LineInfo, Scrape};
use std::collections::BTreeSet;
use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A supervisor on `dir` with a deadline due in 20 minutes, ticked twice.
fn ticked(dir: &Path) -> std::process::Child {
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    let child = support::up(dir, "", &[]);
    support::wait_ready(dir);
    for _ in 0..2 {
        let out = support::raven(dir, &["tick"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    child
}

fn metrics(dir: &Path) -> String {
    let out = support::raven(dir, &["metrics"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// The family names the output declares (`# TYPE <name> <kind>`), with what each may be
/// queried as.
fn queryable(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        let (name, kind) = line.split_once(' ').unwrap();
        let suffixes: &[&str] = match kind {
            "counter" => &["_total"],
            "histogram" => &["_bucket", "_sum", "_count"],
            _ => &[""],
        };
        names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
    }
    names
}

/// Every `raven_…` name in the dashboard's queries.
fn dashboard_metrics() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dashboards/raven.json");
    let board: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut names = BTreeSet::new();
    for panel in board["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            names.extend(metric_names(target["expr"].as_str().unwrap()));
        }
    }
    names
}

fn metric_names(expr: &str) -> Vec<String> {
    let words = expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    words.filter(|w| w.starts_with("raven_")).map(str::to_owned).collect()
}

#[test]
fn metrics_parse_and_cover_the_dashboard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = ticked(dir);
    let text = metrics(dir);
    let _ = child.kill();
    let _ = child.wait();

    for line in text.lines().filter(|l| *l != "# EOF") {
        let parsed = LineInfo::parse(line);
        assert!(!matches!(parsed, LineInfo::Ignored | LineInfo::Empty), "not Prometheus text: {line:?}");
    }
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let sampled: BTreeSet<&str> = scrape.samples.iter().map(|s| s.metric.as_str()).collect();
    for name in ["raven_nudges_total", "raven_deliveries_total", "raven_ticks_total", "raven_gate_denials_total"] {
        assert!(sampled.contains(name), "no sample of {name}:\n{text}");
    }
    for family in
        ["raven_cron_fires", "raven_outbox_moves", "raven_feedback_verdicts", "raven_llm_calls", "raven_llm_tokens"]
    {
        assert!(scrape.docs.contains_key(family), "{family} missing:\n{text}");
    }
    assert!(text.contains("raven_outbox_depth 0\n") && text.contains("raven_outbox_dead_letters 0\n"), "{text}");
    assert!(text.contains("raven_actor_messages_received_total{actor=\"DeliveryHub\"}"), "{text}");
    assert!(text.contains("raven_actor_handling_seconds_bucket{le="), "{text}");

    let (wanted, have) = (dashboard_metrics(), queryable(&text));
    assert!(wanted.len() >= 10, "{wanted:?}");
    let missing: Vec<_> = wanted.difference(&have).collect();
    assert!(missing.is_empty(), "the dashboard queries {missing:?}, not in:\n{text}");
}

/// Before anything happened, every metric the dashboard queries is already there (at zero),
/// so its panels show 0 rather than "no data" on a quiet engine.
#[test]
fn a_fresh_supervisor_shows_every_dashboard_metric_before_its_first_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, "", &[]));
    support::wait_ready(dir);
    let text = metrics(dir);
    let (wanted, have) = (dashboard_metrics(), queryable(&text));
    let missing: Vec<_> = wanted.difference(&have).collect();
    assert!(missing.is_empty(), "the dashboard queries {missing:?}, not in:\n{text}");
    for sample in ["raven_nudges_total{action=\"nudge\",source=\"sentinel\"} 0", "raven_gate_denials_total{layer=\"2\""]
    {
        assert!(text.contains(sample), "{sample} missing:\n{text}");
    }
}
