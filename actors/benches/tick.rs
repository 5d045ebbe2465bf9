//! Tick overhead with the embedded rules provider on a 1 MB MEMORY.md and a 1 MB history,
//! next to the in-run baseline of just reading those two files; and the LLM calls of a
//! simulated idle day of 48 ticks.

use chrono::{Duration, TimeZone, Utc};
use raven_actors::clock::ManualClock;
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::{Engine, Overrides};
use raven_actors::sentinel::Tick;
use raven_actors::testkit::sim::{idle_day_llm_calls, Sink};
use std::rc::Rc;
use std::time::Instant;

const TICKS: usize = 201;

fn megabyte(line: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 1 << 20 {
        s.push_str(&line(i));
        s.push('\n');
        i += 1;
    }
    s
}

/// Every nudge is delivered (to nowhere): the steady state of a running engine, where what
/// was said is on record and the gate denies its repeats.
fn sink() -> Overrides {
    Overrides { router: Some(Rc::new(Sink)), ..Overrides::default() }
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("raven-bench-tick-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dir = DataDir::new(&tmp);
    dir.ensure().unwrap();
    std::fs::write(
        dir.memory(),
        megabyte(|i| {
            if i % 500 == 0 {
                format!("- [ ] errand {i} due: 2027-01-{:02} 10:00", 1 + i % 28)
            } else {
                format!("note {i}: the user mentioned something worth remembering")
            }
        }),
    )
    .unwrap();
    std::fs::write(
        dir.history(),
        megabyte(|i| format!("- 2026-02-{:02} {:02}:{:02} user: message number {i}", 1 + i % 28, i % 24, i % 60)),
    )
    .unwrap();

    let (full, fast, read) = actix_rt::System::new().block_on(async {
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap());
        let mut config = RavenConfig::default();
        config.sentinel.skip_cache_ttl_s = 3600;
        let engine = Engine::start_with(&dir, &config, clock.shared(), sink()).unwrap();
        let mut fast = Vec::new();
        for _ in 0..TICKS {
            clock.advance(Duration::seconds(10));
            let t = Instant::now();
            engine.runner.call_async(Tick).await.unwrap();
            fast.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut config = RavenConfig::default();
        // Every tick asks the provider: the full path, not the unchanged-context shortcut.
        config.sentinel.skip_cache_ttl_s = 0;
        let engine = Engine::start_with(&dir, &config, clock.shared(), sink()).unwrap();
        let mut full = Vec::new();
        for _ in 0..TICKS {
            clock.advance(Duration::seconds(10));
            let t = Instant::now();
            engine.runner.call_async(Tick).await.unwrap();
            full.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut read = Vec::new();
        for _ in 0..TICKS {
            let t = Instant::now();
            std::hint::black_box(std::fs::read(dir.memory()).unwrap());
            std::hint::black_box(std::fs::read(dir.history()).unwrap());
            read.push(t.elapsed().as_secs_f64() * 1e3);
        }
        (p50(full), p50(fast), p50(read))
    });
    let calls = actix_rt::System::new().block_on(idle_day_llm_calls(48, Duration::minutes(30)));
    let _ = std::fs::remove_dir_all(&tmp);

    println!("{:<52} {:>10}", "benchmark", "figure");
    println!("{:<52} {:>7.3} ms", "tick p50, rules provider, 1 MB memory + history", full);
    println!("{:<52} {:>7.3} ms", "tick p50, unchanged-context fast path", fast);
    println!("{:<52} {:>7.3} ms", "baseline: read the two files, p50", read);
    println!("{:<52} {:>10.2}", "ratio tick / baseline", full / read);
    println!("{:<52} {:>10}", "LLM calls, idle day of 48 ticks", calls);
    println!("targets: tick p50 <= 1 ms; idle day <= 6 LLM calls");
}
