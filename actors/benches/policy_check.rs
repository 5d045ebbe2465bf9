//! `check()` cost against ledgers of 100, 1k and 10k fires: p50 per call of each, and the
//! 10k/100 ratio (the 100-entry ledger is the in-run baseline).
//!
//! The request passes every layer, so all eleven run (the worst case). Each sample times a
//! batch of calls; the p50 is the median over samples of the mean call time in a batch.

use chrono::{Duration, TimeZone, Utc};
use raven_actors::config::PolicyConfig;
use raven_actors::policy::NudgePolicy;
use raven_proto::{Action, Priority};
use std::hint::black_box;
use std::time::Instant;

const SAMPLES: usize = 301;
const BATCH: usize = 2_000;

fn ledger(n: usize) -> NudgePolicy {
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    let mut p = NudgePolicy::new(PolicyConfig::default(), chrono_tz::Europe::Berlin);
    // Spread over the past week, before today, on many topics and sessions, so none of
    // them makes the benchmark request fail a layer early.
    let span = Duration::days(6).num_seconds();
    for i in 0..n {
        let at = now - Duration::days(7) + Duration::seconds(span * i as i64 / n as i64);
        let topic = format!("topic{}", i % 2_000);
        p.record_fired(
            Action::Nudge,
            Some(&format!("s:{}", i % 500)),
            &format!("message {i}"),
            Priority::Low,
            Some(&topic),
            at,
        );
    }
    p
}

fn p50_ns(p: &NudgePolicy) -> f64 {
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    let content = "Drink a glass of water before the meeting";
    let verdict = p.check(Action::Nudge, Some("cli:1"), content, Priority::Low, now);
    assert!(
        verdict.allow,
        "the benchmark request must pass every layer: {verdict:?}"
    );
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..BATCH {
                black_box(p.check(
                    black_box(Action::Nudge),
                    black_box(Some("cli:1")),
                    black_box(content),
                    Priority::Low,
                    now,
                ));
            }
            t.elapsed().as_nanos() as f64 / BATCH as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[SAMPLES / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let mut results = Vec::new();
    for n in [100usize, 1_000, 10_000] {
        let p = ledger(n);
        assert_eq!(p.state().fires.len(), n);
        results.push((n, p50_ns(&p)));
    }
    println!("{:<34} {:>12}", "benchmark", "p50");
    for (n, ns) in &results {
        println!(
            "{:<34} {:>9.0} ns",
            format!("policy check(), ledger {n}"),
            ns
        );
    }
    let ratio = results[2].1 / results[0].1;
    println!("{:<34} {:>12.2}", "policy check() ratio 10k/100", ratio);
    println!("targets: p50 <= 1000 ns at 10k, ratio <= 2");
}
