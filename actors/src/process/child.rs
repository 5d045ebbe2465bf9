//! The gateway child: started as `raven --data-dir <dir> gateway`, restarted when it dies
//! (after `first`, doubling up to 5 s while it keeps dying young, back to `first` once it has
//! run for a minute); one that cannot listen is tried again every minute. A gateway that
//! outlived the previous supervisor is adopted first: watched, and replaced when it dies.

use super::pid::{live_gateway, pid_alive};
use super::{CANNOT_LISTEN, SUPERVISED};
use crate::data_dir::DataDir;
use crate::supervise::restart::{self, Ended};
use crate::supervise::RestartPolicy;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

/// How often a gateway that could not listen is tried again.
const LISTEN_RETRY: Duration = Duration::from_secs(60);
/// A child that ran this long was healthy: the next restart waits `first` again.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// What became of the gateway child, for the supervisor to tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEvent {
    /// A gateway of this data dir was already running: it is watched, not started.
    Adopted { pid: u32 },
    /// The adopted gateway exited; a child takes its place.
    AdoptedExited { pid: u32 },
    /// The child cannot listen (said once until it can again); tried again every minute.
    CannotListen,
    /// The child exited (`status` says how) and is started again after `restart_in`.
    Exited { status: String, restart_in: Duration },
}

/// The task that keeps the gateway child running.
pub struct GatewayChild {
    task: actix_rt::task::JoinHandle<()>,
}

impl GatewayChild {
    /// Starts (or adopts) the gateway of `dir` and keeps it running; `tell` hears each event.
    pub fn start(dir: &DataDir, first: Duration, tell: impl Fn(ChildEvent) + 'static) -> GatewayChild {
        GatewayChild { task: actix_rt::spawn(keep_running(dir.clone(), first, tell)) }
    }

    /// Stops keeping it: the child is dropped, which kills it.
    pub fn stop(self) {
        self.task.abort();
    }
}

async fn keep_running(dir: DataDir, first: Duration, tell: impl Fn(ChildEvent)) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            tracing::error!("cannot find the raven binary to start the gateway: {e}");
            return;
        }
    };
    if let Some(pid) = live_gateway(&dir) {
        tell(ChildEvent::Adopted { pid });
        while pid_alive(pid) {
            actix_rt::time::sleep(Duration::from_millis(200)).await;
        }
        tell(ChildEvent::AdoptedExited { pid });
    }
    let policy = RestartPolicy {
        backoff_initial: first,
        backoff_max: Duration::from_secs(5).max(first),
        healthy_run: Some(HEALTHY_RUN),
        ..RestartPolicy::default()
    };
    let mut listen_failed = false;
    let after = |ended: Ended<std::io::Result<ExitStatus>>, wait| {
        let status = match ended {
            Ended::Returned(Ok(s)) if s.code() == Some(i32::from(CANNOT_LISTEN)) => {
                if !listen_failed {
                    tell(ChildEvent::CannotListen);
                    listen_failed = true;
                }
                return Some(LISTEN_RETRY);
            }
            Ended::Returned(Ok(s)) => s.to_string(),
            Ended::Returned(Err(e)) => e.to_string(),
            Ended::Panicked => "the wait for it failed".to_owned(),
        };
        listen_failed = false;
        tell(ChildEvent::Exited { status, restart_in: wait });
        Some(wait)
    };
    restart::keep_running("the gateway child", &policy, || run_once(&exe, &dir), after).await;
}

/// Runs the gateway once, to its end (killed when this future is dropped).
async fn run_once(exe: &Path, dir: &DataDir) -> std::io::Result<std::process::ExitStatus> {
    let child = tokio::process::Command::new(exe)
        .arg("--data-dir")
        .arg(dir.root())
        .arg("gateway")
        .env(SUPERVISED, std::process::id().to_string())
        .kill_on_drop(true)
        .spawn();
    child?.wait().await
}
