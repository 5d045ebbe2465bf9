//! Two engine processes on one data dir: 100 jobs due in the same second fire exactly once
//! each (deliveries counted at the outlet); a process killed with SIGKILL while it holds
//! claims leaves them to the other, which fires each claimed-but-unfired job once after the
//! stale-claim TTL.
//!
//! The test binary re-runs itself as the engine processes: the ignored `engine_worker` test
//! is their body, run only by the parent with `--ignored --exact cron_processes::engine_worker`.

use futures_util::future::LocalBoxFuture;
use raven_actors::clock::SystemClock;
use raven_actors::config::RavenConfig;
use raven_actors::cron::store::{Job, JobState, JobsStore, Schedule};
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outlets::{Outlet, OutletError};
use raven_actors::engine::{Engine, Overrides};
use raven_proto::OutboundText;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const JOBS: usize = 100;
/// The claim TTL of the kill test: short, so the survivor takes over soon. The exactly-once
/// test runs with [`LONG_TTL_S`] instead: one engine's whole batch of 100 fires is written back
/// only when the batch ends, and on a loaded machine that can take longer than 2 s.
const TTL_S: u64 = 2;
const LONG_TTL_S: u64 = 120;

/// Appends `<delivery id> <pid>` per delivery, or (hanging) never returns, so the process
/// holds its claims until it is killed.
struct CountOutlet {
    path: PathBuf,
    hang: bool,
}

impl Outlet for CountOutlet {
    fn channel(&self) -> &str {
        "count"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            if self.hang {
                std::future::pending::<()>().await;
            }
            let line = format!("{} {} {}\n", text.delivery_id, std::process::id(), chrono::Utc::now().to_rfc3339());
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).unwrap();
            // One short O_APPEND write: lines from two processes never interleave.
            f.write_all(line.as_bytes()).map_err(|e| OutletError::Transient(e.to_string()))
        })
    }
}

#[test]
#[ignore = "the engine process of the tests below"]
fn engine_worker() {
    let root = PathBuf::from(std::env::var_os("RAVEN_CRON_WORKER").expect("run by the parent test only"));
    let hang = std::env::var("RAVEN_CRON_HANG").is_ok();
    let mut config = RavenConfig::default();
    config.sentinel.enabled = false;
    config.cron.claim_ttl_s = std::env::var("RAVEN_CRON_TTL_S").ok().and_then(|t| t.parse().ok()).unwrap_or(TTL_S);
    config.cron.max_sleep_s = 1;
    let dir = DataDir::new(root.clone());
    actix_rt::System::new().block_on(async move {
        let outlet = Arc::new(CountOutlet { path: root.join("count.log"), hang });
        let o = Overrides { outlets: vec![outlet], ..Default::default() };
        let engine = Engine::start_with(&dir, &config, Arc::new(SystemClock), o).expect("engine");
        let _loops = engine.spawn_loops(&config);
        std::fs::write(root.join(format!("ready.{}", std::process::id())), "").unwrap();
        // Done when every one-shot job has fired and gone.
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            actix_rt::time::sleep(Duration::from_millis(20)).await;
            if JobsStore::new(dir.jobs()).load().is_ok_and(|f| f.jobs.is_empty()) {
                return;
            }
        }
        panic!("jobs left after 30 s");
    });
}

/// An engine process; what it writes to stderr goes to `worker.<n>.err` in `root` (see
/// [`failed`]).
fn worker(root: &Path, hang: bool, ttl_s: u64) -> Child {
    let n = std::fs::read_dir(root).unwrap().filter(|e| e.as_ref().is_ok_and(|e| is_err_file(&e.path()))).count();
    let err = std::fs::File::create(root.join(format!("worker.{n}.err"))).unwrap();
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--ignored", "--exact", "cron_processes::engine_worker", "--test-threads=1"])
        .stdout(Stdio::null())
        .stderr(err)
        .env("RAVEN_CRON_WORKER", root)
        .env("RAVEN_CRON_TTL_S", ttl_s.to_string());
    if hang {
        c.env("RAVEN_CRON_HANG", "1");
    }
    c.spawn().expect("spawn engine worker")
}

fn jobs(root: &Path, due: chrono::DateTime<chrono::Utc>) {
    let store = JobsStore::new(root.join("cron/jobs.json"));
    store
        .update(|f| {
            f.jobs.extend((0..JOBS).map(|i| Job {
                id: format!("j{i}"),
                message: format!("reminder number {i}"),
                schedule: Schedule::At { at: due },
                target: Some("count:me".into()),
                broadcast: Vec::new(),
                created_at: due,
                enabled: true,
                topic: Some(format!("topic {i}")),
                state: JobState::default(),
                extra: Default::default(),
            }))
        })
        .unwrap();
}

/// Fires per job id, and the earliest delivery time, from the outlet's log.
fn fires(root: &Path) -> (std::collections::BTreeMap<String, usize>, Option<chrono::DateTime<chrono::Utc>>) {
    let mut out = std::collections::BTreeMap::new();
    let mut first = None;
    for line in std::fs::read_to_string(root.join("count.log")).unwrap_or_default().lines() {
        let mut parts = line.split(' ');
        let (id, _pid, at) = (parts.next().unwrap(), parts.next(), parts.next().unwrap());
        // cron-<job>-<slot>@<target>
        let fire = id.split_once('@').map_or(id, |(f, _)| f);
        let job = fire.strip_prefix("cron-").and_then(|r| r.rsplit_once('-')).map(|(j, _)| j).unwrap();
        *out.entry(job.to_owned()).or_default() += 1;
        let at = chrono::DateTime::parse_from_rfc3339(at).unwrap().with_timezone(&chrono::Utc);
        first = Some(first.map_or(at, |f: chrono::DateTime<chrono::Utc>| f.min(at)));
    }
    (out, first)
}

fn is_err_file(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "err")
}

/// What the engine processes said on stderr, for a failed assertion.
fn failed(root: &Path) -> String {
    let mut said = String::new();
    for e in std::fs::read_dir(root).unwrap().flatten().filter(|e| is_err_file(&e.path())) {
        said += &format!("--- {}\n{}", e.path().display(), std::fs::read_to_string(e.path()).unwrap_or_default());
    }
    said
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_engines_fire_each_of_a_hundred_jobs_due_in_the_same_second_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    jobs(root, chrono::Utc::now() + chrono::Duration::seconds(2));
    let (mut a, mut b) = (worker(root, false, LONG_TTL_S), worker(root, false, LONG_TTL_S));
    let (ra, rb) = (a.wait().unwrap(), b.wait().unwrap());
    assert!(ra.success() && rb.success(), "an engine failed ({ra}, {rb}):\n{}", failed(root));
    let (fires, _) = fires(root);
    assert_eq!(fires.len(), JOBS, "every job fired");
    assert!(fires.values().all(|n| *n == 1), "a job fired twice: {fires:?}");
}

#[test]
fn claims_of_a_killed_engine_are_fired_by_the_other_after_the_ttl_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let store = JobsStore::new(root.join("cron/jobs.json"));
    jobs(root, chrono::Utc::now());
    // The first engine claims every job, then hangs in delivery holding the claims.
    let mut hanging = worker(root, true, TTL_S);
    let pid = hanging.id();
    wait_for("the claims", || {
        store.load().is_ok_and(|f| f.jobs.iter().all(|j| j.state.claim.is_some_and(|c| c.pid == pid)))
    });
    let claimed_at = store.load().unwrap().jobs.iter().filter_map(|j| j.state.claim).map(|c| c.at).min().unwrap();
    hanging.kill().unwrap(); // SIGKILL
    hanging.wait().unwrap();
    assert!(!root.join("count.log").exists(), "the hanging engine delivered nothing");
    let mut other = worker(root, false, TTL_S);
    assert!(other.wait().unwrap().success(), "the second engine failed:\n{}", failed(root));
    let (fires, first) = fires(root);
    let stale = claimed_at + chrono::Duration::seconds(TTL_S as i64);
    assert!(first.unwrap() >= stale, "fired at {first:?}, before the claims went stale at {stale}");
    assert_eq!(fires.len(), JOBS, "every claimed job fired");
    assert!(fires.values().all(|n| *n == 1), "a job fired twice: {fires:?}");
}
