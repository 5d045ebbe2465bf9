//! Cron at 10,000 jobs: the cost of computing the next wake (in memory) and of firing one job
//! (claim and write-back under the jobs.json lock, the run state in the state database; its
//! time and the bytes it writes, from `/proc/self/io`), each
//! against in-run baselines (100 jobs; a locked read and parse of the same file), and the lateness of fires on the system clock
//! (p50/p99 of fire time minus due time) with and without 10,000 jobs waiting.

use chrono::{DateTime, Duration, TimeZone, Utc};
use raven_actors::clock::{Clock, SystemClock};
use raven_actors::cron::claims::{ChannelFilter, Claimer, Reached};
use raven_actors::cron::service::{spawn_cron_loop, CronService, FireJob, Fired};
use raven_actors::cron::store::{Job, JobState, JobsFile, JobsStore, Schedule};
use raven_actors::supervise::{start, LocalBoxFuture, Metrics, RestartPolicy};
use std::cell::RefCell;
use std::hint::black_box;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

fn claimer() -> Claimer {
    Claimer {
        pid: std::process::id(),
        ttl: Duration::seconds(300),
        filter: ChannelFilter::default(),
        strike_limit: 1000,
        strike_min_gap: Duration::days(1),
    }
}

fn job(i: usize, schedule: Schedule, created: DateTime<Utc>) -> Job {
    Job {
        id: format!("j{i}"),
        message: format!("reminder {i}"),
        schedule,
        target: Some("bench:me".into()),
        broadcast: Vec::new(),
        created_at: created,
        enabled: true,
        topic: None,
        state: JobState::default(),
        extra: Default::default(),
    }
}

/// `n` jobs, a third each of `every`, cron (in three zones) and far one-shots, armed.
fn jobs(n: usize, now: DateTime<Utc>) -> JobsFile {
    let zones = ["Europe/Berlin", "America/New_York", "UTC"];
    let mut f = JobsFile {
        jobs: (0..n)
            .map(|i| {
                let s = match i % 3 {
                    0 => Schedule::Every { every_s: 3600 + i as u64, anchor: now },
                    1 => Schedule::Cron { expr: format!("{} {} * * *", i % 60, i % 24), tz: zones[i % 3].into() },
                    _ => Schedule::At { at: now + Duration::days(1 + (i % 30) as i64) },
                };
                job(i, s, now)
            })
            .collect(),
    };
    assert!(claimer().claim_due(&mut f.edit(), now).is_empty(), "nothing due at the start");
    f
}

fn p(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * q).round() as usize]
}

fn next_wake(now: DateTime<Utc>) {
    const SAMPLES: usize = 201;
    let (small, big) = (jobs(100, now), jobs(10_000, now));
    let c = claimer();
    let time = |f: &JobsFile, reps: usize| {
        let t = Instant::now();
        for _ in 0..reps {
            black_box(c.next_wake(black_box(f), now));
        }
        t.elapsed().as_nanos() as f64 / reps as f64
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        a.push(time(&small, 200));
        b.push(time(&big, 2));
    }
    let (a, b) = (p(&mut a, 0.5), p(&mut b, 0.5));
    println!("{:<46} {:>10.1} µs", "next wake, 100 jobs (baseline)", a / 1000.0);
    println!("{:<46} {:>10.1} µs   ratio {:.0} for 100x the jobs", "next wake, 10,000 jobs", b / 1000.0, b / a);
}

/// A counter of this process's `/proc/self/io`: `wchar` (handed to write(2)) or
/// `write_bytes` (dirtied for the disk, page-sized).
fn io(field: &str) -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let value = io.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(": ").map(str::to_owned));
    value.and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// One fire's figures: medians of its time (ms) and of the bytes it wrote (write(2), disk).
struct Fire {
    ms: f64,
    wchar: f64,
    disk: f64,
}

/// (a locked read and full parse of `n` jobs by a fresh store, one fire among them: claim +
/// write-back), medians in ms.
fn fire_one(n: usize, now: DateTime<Utc>) -> (f64, Fire) {
    const SAMPLES: usize = 31;
    let dir = tempfile::tempdir().unwrap();
    let store = JobsStore::new(dir.path().join("jobs.json"));
    let f = jobs(n, now);
    store.update(|file| *file = f).unwrap();
    let c = claimer();
    let (mut read, mut fire, mut wchar, mut disk) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        // A fresh store has nothing cached: this is a full parse.
        let t = Instant::now();
        black_box(JobsStore::new(store.path()).load().unwrap());
        read.push(t.elapsed().as_secs_f64() * 1000.0);
        // Make one job due, then time what a fire costs the store: claim + write-back.
        // Everything else is armed strictly after `now`.
        let at = now;
        store.update(|file| file.jobs[0].state.next_run_at = Some(at)).unwrap();
        let (t, w, d) = (Instant::now(), io("wchar"), io("write_bytes"));
        let claimed = store.update_run(|edit| c.claim_due(edit, at)).unwrap().0;
        assert_eq!(claimed.len(), 1);
        store
            .update_run(|edit| c.complete(edit, &claimed[0].id, &claimed[0].state.claim.unwrap(), Reached::Someone, at))
            .unwrap();
        fire.push(t.elapsed().as_secs_f64() * 1000.0);
        wchar.push((io("wchar") - w) as f64);
        disk.push((io("write_bytes") - d) as f64);
    }
    let fire = Fire { ms: p(&mut fire, 0.5), wchar: p(&mut wchar, 0.5), disk: p(&mut disk, 0.5) };
    (p(&mut read, 0.5), fire)
}

/// A fire among 10,000 jobs against a fire among 100, and against a parse of the 10,000.
fn fires(now: DateTime<Utc>) {
    let ((_, small), (read, big)) = (fire_one(100, now), fire_one(10_000, now));
    println!("{:<46} {:>10.2} ms", "locked read + parse of 10,000 jobs (baseline)", read);
    println!("{:<46} {:>10.2} ms   (baseline)", "fire one: claim + write-back, 100 jobs", small.ms);
    println!(
        "{:<46} {:>10.2} ms   ratio {:.1} to 100 jobs, {:.2} to a parse",
        "fire one: claim + write-back, 10,000 jobs",
        big.ms,
        big.ms / small.ms,
        big.ms / read
    );
    let kib = |f: &Fire| format!("{:.1} KiB through write(2), {:.1} KiB to disk", f.wchar / 1024.0, f.disk / 1024.0);
    println!("{:<46} {}   (baseline)", "fire one, bytes written, 100 jobs", kib(&small));
    println!("{:<46} {}", "fire one, bytes written, 10,000 jobs", kib(&big));
}

/// Records each fire's lateness (fire time minus due time), in ms.
#[derive(Clone, Default)]
struct Lateness(Rc<RefCell<Vec<f64>>>);

impl FireJob for Lateness {
    fn fire(&self, job: Job) -> LocalBoxFuture<'static, Fired> {
        let slot = job.state.claim.unwrap().slot;
        let late = (SystemClock.now() - slot).num_microseconds().unwrap() as f64 / 1000.0;
        self.0.borrow_mut().push(late);
        Box::pin(async { Fired { delivered_to: Vec::new(), reply: None } })
    }

    fn tell(&self, _job: Job, _text: String) -> LocalBoxFuture<'static, Vec<String>> {
        Box::pin(async { Vec::new() })
    }
}

/// 100 one-shots due 20 ms apart, on the real clock, with `background` far jobs waiting.
fn lateness(background: usize) -> (f64, f64) {
    const DUE: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let store = JobsStore::new(dir.path().join("jobs.json"));
    let now = Utc::now();
    let mut f = jobs(background, now);
    let first = now + Duration::milliseconds(500);
    f.jobs.extend((0..DUE).map(|i| {
        let at = first + Duration::milliseconds(20 * i as i64);
        job(background + i, Schedule::At { at }, now)
    }));
    store.update(|file| *file = f).unwrap();
    let seen = Lateness::default();
    actix_rt::System::new().block_on(async {
        let service = CronService::new(store.clone(), claimer(), Rc::new(seen.clone()), Arc::new(SystemClock));
        let handle = start(service, &Metrics::default(), RestartPolicy::default());
        let cap = std::time::Duration::from_secs(60);
        let timer = spawn_cron_loop(handle, Arc::new(SystemClock), Arc::new(tokio::sync::Notify::new()), cap);
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while seen.0.borrow().len() < DUE && Instant::now() < deadline {
            actix_rt::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        timer.abort();
    });
    let mut l = seen.0.borrow().clone();
    assert_eq!(l.len(), DUE, "every due job fired");
    (p(&mut l, 0.5), p(&mut l, 0.99))
}

fn main() {
    let now = Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap();
    next_wake(now);
    fires(now);
    let (a50, a99) = lateness(0);
    let (b50, b99) = lateness(10_000);
    println!("{:<46} {:>7.1} / {:.1} ms   (baseline)", "fire lateness p50/p99, 100 jobs", a50, a99);
    println!("{:<46} {:>7.1} / {:.1} ms", "fire lateness p50/p99, 100 jobs + 10,000 waiting", b50, b99);
}
