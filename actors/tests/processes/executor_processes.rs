//! The shared state files under real processes: two processes consuming one injector queue
//! never take the same inject twice and never lose one; a deferred nudge survives a SIGKILL
//! between register and settle and then fires once.
//!
//! The test binary re-runs itself as the worker processes: the ignored tests below are the
//! workers' bodies, run only by the parent with `--ignored --exact executor_processes::<name>`.

use chrono::{Duration, Utc};
use raven_actors::data_dir::DataDir;
use raven_actors::executor::defer::{DeferManager, Deferred};
use raven_actors::executor::injector::{queues_in, NudgeInjector, PendingInject};
use raven_actors::store::JsonStateStore;
use raven_proto::{Action, Origin, PlannerDecision, Priority};
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const INJECTS: usize = 150;
const SESSION: &str = "cli:1";

fn worker(name: &str, dir: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    let test = format!("executor_processes::{name}");
    c.args(["--ignored", "--exact", &test, "--nocapture", "--test-threads=1"])
        .env("RAVEN_WORKER_DIR", dir)
        .stdout(Stdio::piped());
    c
}

fn worker_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("RAVEN_WORKER_DIR").expect("run by the parent test only"))
}

fn injector(dir: &Path) -> NudgeInjector {
    NudgeInjector::new(queues_in(JsonStateStore::new(dir.join("state.json"))), Duration::hours(1), INJECTS * 2)
}

#[test]
#[ignore = "worker of two_processes_never_consume_an_inject_twice_and_never_lose_one"]
fn inject_producer() {
    let inj = injector(&worker_dir());
    for i in 0..INJECTS {
        let p = PendingInject {
            nudge_id: format!("n{i}"),
            message: format!("m{i}"),
            priority: Priority::Low,
            queued_at: Utc::now(),
            topic: String::new(),
        };
        inj.queue(SESSION, p).unwrap();
    }
    println!("DONE");
}

#[test]
#[ignore = "worker of two_processes_never_consume_an_inject_twice_and_never_lose_one"]
fn inject_consumer() {
    let dir = worker_dir();
    let inj = injector(&dir);
    let done = dir.join("producer.done");
    loop {
        let finished = done.exists();
        let taken = inj.take(SESSION, Origin::User, Utc::now()).unwrap();
        for t in &taken {
            println!("TOOK {}", t.nudge_id);
        }
        if finished && taken.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn taken_ids(out: std::process::Output) -> Vec<String> {
    assert!(out.status.success(), "a consumer failed");
    // The harness may print "test <name> ... " on the first line, before the worker's output.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("TOOK ").map(|(_, id)| id.trim().to_owned()))
        .collect()
}

#[test]
fn two_processes_never_consume_an_inject_twice_and_never_lose_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a = worker("inject_consumer", dir).spawn().unwrap();
    let b = worker("inject_consumer", dir).spawn().unwrap();
    let producer = worker("inject_producer", dir).output().unwrap();
    assert!(producer.status.success());
    std::fs::write(dir.join("producer.done"), "").unwrap();
    let mut all = taken_ids(a.wait_with_output().unwrap());
    let from_b = taken_ids(b.wait_with_output().unwrap());
    all.extend(from_b);
    let unique: HashSet<_> = all.iter().cloned().collect();
    assert_eq!(unique.len(), all.len(), "an inject was consumed twice");
    assert_eq!(unique.len(), INJECTS, "an inject was lost");
}

/// The engine's defer manager on `dir` as a data dir (settles after 10 idle minutes).
fn defer_manager(dir: &Path) -> DeferManager {
    DeferManager::in_data_dir(&DataDir::new(dir), &Default::default()).unwrap()
}

#[test]
#[ignore = "worker of a_sigkill_between_register_and_settle_loses_nothing"]
fn defer_registrar() {
    let dir = worker_dir();
    let mut d = PlannerDecision::with_message(Action::NudgeDefer, "After your call: the invoice", "test");
    d.defer_condition = Some("the thread settles".into());
    d.target_session = Some(SESSION.into());
    // The user is mid-conversation: the defer cannot settle yet.
    let sessions = DataDir::new(&dir).sessions();
    std::fs::create_dir_all(&sessions).unwrap();
    let line = serde_json::json!({"role": "user", "content": "hi", "at": Utc::now().to_rfc3339()});
    std::fs::write(sessions.join("cli_1.jsonl"), format!("{line}\n")).unwrap();
    defer_manager(&dir).register(Deferred { id: "d-1".into(), decision: d, registered_at: Utc::now() }).unwrap();
    println!("READY");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

#[test]
fn a_sigkill_between_register_and_settle_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = worker("defer_registrar", dir).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout).lines().map_while(Result::ok).any(|l| l.contains("READY"));
    assert!(ready, "the registrar never got ready");
    // SIGKILL: no destructor, no flush runs in the child.
    child.kill().unwrap();
    child.wait().unwrap();

    let m = defer_manager(dir);
    let now = Utc::now();
    assert!(m.poll(now).unwrap().settled.is_empty(), "still inside the conversation");
    let later = now + Duration::minutes(11);
    let settled = m.poll(later).unwrap().settled;
    assert_eq!(settled.len(), 1, "the deferred nudge survived the kill");
    assert_eq!(settled[0].decision.nudge_message.as_deref(), Some("After your call: the invoice"));
    assert!(m.poll(later + Duration::minutes(1)).unwrap().settled.is_empty(), "it fires once");
}
