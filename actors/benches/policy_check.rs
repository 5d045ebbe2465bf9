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

/// Mean call time of one batch, in ns.
fn batch_ns(p: &NudgePolicy) -> f64 {
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    let t = Instant::now();
    for _ in 0..BATCH {
        black_box(p.check(black_box(Action::Nudge), black_box(Some("cli:1")), black_box(CONTENT), Priority::Low, now));
    }
    t.elapsed().as_nanos() as f64 / BATCH as f64
}

const CONTENT: &str = "Drink a glass of water before the meeting";

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    let sizes = [100usize, 1_000, 10_000];
    let policies: Vec<NudgePolicy> = sizes.iter().map(|&n| ledger(n)).collect();
    for (p, n) in policies.iter().zip(sizes) {
        assert_eq!(p.state().fires.len(), n);
        let v = p.check(Action::Nudge, Some("cli:1"), CONTENT, Priority::Low, now);
        assert!(v.allow, "the benchmark request must pass every layer: {v:?}");
        batch_ns(p); // warm-up
    }
    // Samples interleave the sizes, so drift of the machine hits all of them alike.
    let mut samples = vec![Vec::with_capacity(SAMPLES); sizes.len()];
    for _ in 0..SAMPLES {
        for (i, p) in policies.iter().enumerate() {
            samples[i].push(batch_ns(p));
        }
    }
    let p50: Vec<f64> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            s[SAMPLES / 2]
        })
        .collect();
    println!("{:<34} {:>12}", "benchmark", "p50");
    for (n, ns) in sizes.iter().zip(&p50) {
        println!("{:<34} {:>9.0} ns", format!("policy check(), ledger {n}"), ns);
    }
    println!("{:<34} {:>12.2}", "policy check() ratio 10k/100", p50[2] / p50[0]);
    println!("targets: p50 <= 1000 ns at 10k, ratio <= 2");
}
