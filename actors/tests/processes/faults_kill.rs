//! The fault suite, part two: 200 SIGKILLs of an engine process at random points while it
//! fires Sentinel nudges and cron jobs on one data dir. After each kill the state files,
//! jobs.json and the jsonl outlet's file parse, and the state database passes SQLite's
//! integrity check with its outbox readable; at the end every cron job has been delivered (no
//! reminder lost), no delivery id was written twice and the Sentinel's nudge went out at
//! most once (no fire delivered twice), and every delivery acknowledged before a kill is
//! still there.
//!
//! The test binary re-runs itself as the engine process: the ignored `engine_worker` test is
//! its body, run only by the parent with `--ignored --exact faults_kill::engine_worker`.

use raven_actors::clock::SystemClock;
use raven_actors::config::RavenConfig;
use raven_actors::cron::store::{Job, JobState, JobsStore, Schedule};
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outbox::{OutboxStore, SqliteOutbox};
use raven_actors::engine::Engine;
use raven_actors::sentinel::Tick;
use raven_actors::store::db::Database;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KILLS: usize = 200;
const JOBS: usize = 40;

fn config() -> RavenConfig {
    let mut c = RavenConfig::default();
    c.sentinel.enabled = false; // the worker ticks itself, fast
    c.cron.claim_ttl_s = 1;
    c.cron.max_sleep_s = 1;
    c.delivery.jsonl_path = "out.jsonl".into();
    // A webhook no one answers as well: what goes to it waits in the outbox and is retried
    // every second.
    c.delivery.webhook_url = "http://127.0.0.1:9/hook".into();
    c.delivery.webhook_attempts = 0;
    c.delivery.default_targets = vec!["jsonl:me".into(), "webhook:x".into()];
    c.delivery.outbox_backoff_s = 1;
    let midnight = raven_actors::config::TimeOfDay::hm(0, 0);
    c.policy.quiet_hours = raven_actors::config::Window { start: midnight, end: midnight };
    c.gateway.enabled = false;
    c
}

#[test]
#[ignore = "the engine process of the test below"]
fn engine_worker() {
    let root = PathBuf::from(std::env::var_os("RAVEN_KILL_WORKER").expect("run by the parent test only"));
    let dir = DataDir::new(root);
    let config = config();
    actix_rt::System::new().block_on(async move {
        let engine = Engine::start(&dir, &config, Arc::new(SystemClock)).expect("engine");
        let _loops = engine.spawn_loops(&config);
        // Ticks as fast as they go: the rules provider nudges the imminent deadlines.
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let _ = engine.runner.call_async(Tick).await;
            actix_rt::time::sleep(Duration::from_millis(2)).await;
            if JobsStore::new(dir.jobs()).load().is_ok_and(|f| f.jobs.is_empty())
                && std::env::var_os("RAVEN_KILL_FINISH").is_some()
            {
                // Let the outbox drain, then stop.
                actix_rt::time::sleep(Duration::from_millis(1500)).await;
                return;
            }
        }
    });
}

/// A tiny deterministic PRNG (splitmix64): the kill points are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn worker(root: &Path, finish: bool) -> std::process::Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--ignored", "--exact", "faults_kill::engine_worker", "--test-threads=1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env("RAVEN_KILL_WORKER", root);
    if finish {
        c.env("RAVEN_KILL_FINISH", "1");
    }
    c.spawn().expect("spawn engine worker")
}

/// The jsonl outlet's lines: delivery id → content. Every line must parse.
fn delivered(root: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root.join("out.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("a torn line {l:?}: {e}"));
            (v["delivery_id"].as_str().unwrap().to_owned(), v["content"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

fn files_parse(root: &Path) {
    for e in std::fs::read_dir(root.join("sentinel/state")).into_iter().flatten() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            serde_json::from_str::<serde_json::Value>(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    JobsStore::new(root.join("cron/jobs.json")).load().unwrap_or_else(|e| panic!("{e}"));
    let _ = delivered(root);
    outbox_of(root);
}

/// The state database after a kill: whole by SQLite's integrity check, and its outbox read
/// back row by row; how many messages it holds, waiting or dead.
fn outbox_of(root: &Path) -> usize {
    let Some(db) = Database::open_read_only(&root.join("state.db")).unwrap() else { return 0 };
    assert_eq!(db.check().unwrap(), ["ok"], "the state database after a kill");
    let outbox = SqliteOutbox::read_only(Arc::new(db)).snapshot().unwrap_or_else(|e| panic!("{e}"));
    outbox.entries.len() + outbox.dead.len()
}

#[test]
fn two_hundred_sigkills_lose_no_reminder_and_deliver_nothing_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let now = chrono::Utc::now();
    // Deadlines the Sentinel nudges, and cron jobs due over the first seconds of the run.
    std::fs::create_dir_all(root.join("workspace")).unwrap();
    let due = (now + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(root.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    JobsStore::new(root.join("cron/jobs.json"))
        .update(|f| {
            f.jobs.extend((0..JOBS).map(|i| Job {
                id: format!("j{i}"),
                message: format!("reminder number {i}"),
                schedule: Schedule::At { at: now + chrono::Duration::milliseconds(100 * i as i64) },
                // The webhook too: each fire also waits in the outbox, so the kills land in
                // the state database's transactions.
                target: None,
                broadcast: vec!["jsonl:me".into(), "webhook:x".into()],
                created_at: now,
                enabled: true,
                topic: Some(format!("topic {i}")),
                state: JobState::default(),
                extra: Default::default(),
            }))
        })
        .unwrap();
    let mut rng = Rng(0x5eed);
    let mut acknowledged: Vec<(String, String)> = Vec::new();
    for kill in 0..KILLS {
        let mut w = worker(root, false);
        // Mostly early (start-up, claims, the first fires); every tenth later, so deliveries
        // happen during the kills even on a machine slow to start a process.
        let late = if kill % 10 == 9 { 150 } else { 0 };
        std::thread::sleep(Duration::from_millis(5 + late + rng.next() % 40));
        w.kill().unwrap(); // SIGKILL
        w.wait().unwrap();
        files_parse(root);
        let now = delivered(root);
        assert!(now.starts_with(&acknowledged), "an acknowledged delivery went missing");
        acknowledged = now;
    }
    // The kills landed while work was going on, not only before the engine started.
    assert!(!acknowledged.is_empty(), "no delivery happened during the kills");
    // One last run to the end: whatever was claimed and killed fires after the TTL.
    let mut last = worker(root, true);
    assert!(last.wait().unwrap().success(), "the final engine run failed");
    let all = delivered(root);
    let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, _) in &all {
        *by_id.entry(id).or_default() += 1;
    }
    let twice: Vec<_> = by_id.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered twice: {twice:?}");
    for i in 0..JOBS {
        let text = format!("reminder number {i}");
        assert!(all.iter().any(|(_, c)| c.contains(&text)), "job j{i} was never delivered");
    }
    assert!(outbox_of(root) > 0, "the outbox was written during the run");
    // A Sentinel nudge is charged before it goes out: a kill in between loses it, but no
    // process ever sends it a second time.
    let nudges = all.iter().filter(|(_, c)| c.contains("Call the bank")).count();
    assert!(nudges <= 1, "the deadline was nudged {nudges} times: {all:?}");
}
