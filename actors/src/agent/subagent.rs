//! The micro-agent of `spawn_agent`: a SUBAGENT turn in a conversation of its own, run by the
//! agent loop with the tools that write no file of the user's and its own limits
//! (`agent.subagent_max_iterations`, `agent.subagent_max_tokens`).

use crate::executor::spawn::SpawnError;
use crate::spine::TurnOutcome;
use futures_util::future::LocalBoxFuture;
use raven_proto::{Origin, TurnRequest};

/// The real SubagentManager: a SUBAGENT turn (its own conversation) submitted to the spine,
/// so it runs in the system pool beside cron and heartbeat turns; ProactiveSpawn delivers its
/// result to the originating channel.
pub struct AgentSubagent {
    scheduler: crate::spine::Scheduler,
    clock: crate::clock::SharedClock,
    /// Where the runs' conversations are kept: the newest [`SUBAGENT_RUNS_KEPT`] of them.
    sessions: std::path::PathBuf,
    seq: std::cell::Cell<u64>,
}

/// Subagent conversations kept (for a look at what a run did); older ones are removed when a
/// new run starts.
pub const SUBAGENT_RUNS_KEPT: usize = 50;

impl AgentSubagent {
    pub fn new(
        scheduler: crate::spine::Scheduler,
        clock: crate::clock::SharedClock,
        sessions: std::path::PathBuf,
    ) -> Self {
        AgentSubagent { scheduler, clock, sessions, seq: Default::default() }
    }
}

/// Removes all but the newest `keep` subagent conversations in `dir`.
fn prune_subagent_runs(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut runs: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("subagent_"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    runs.sort();
    let over = runs.len().saturating_sub(keep);
    for (_, path) in runs.into_iter().take(over) {
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!("an old subagent conversation was not removed: {}: {e}", path.display());
        }
    }
}

impl crate::executor::spawn::SubagentManager for AgentSubagent {
    fn spawn<'a>(
        &'a self,
        task: &'a str,
        channel: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<String, SpawnError>> {
        Box::pin(async move {
            self.seq.set(self.seq.get() + 1);
            prune_subagent_runs(&self.sessions, SUBAGENT_RUNS_KEPT.saturating_sub(1));
            let n = format!("{}-{}", std::process::id(), self.seq.get());
            let req = TurnRequest::new(
                format!("spawn-{n}"),
                Origin::Subagent,
                format!("subagent:{n}"),
                "subagent",
                n.clone(),
                format!("{task}\n(for {channel}:{chat_id})"),
                raven_proto::BusyPolicy::Append,
                self.clock.now(),
            );
            let (_, outcome) = self.scheduler.submit_wait(req);
            match outcome.await {
                Ok(TurnOutcome::Replied(text) | TurnOutcome::Refused(text)) => Ok(text),
                Ok(TurnOutcome::Failed(e)) => Err(SpawnError::Failed(e)),
                Ok(TurnOutcome::Interrupted) => Err(SpawnError::Interrupted),
                Err(_) => Err(SpawnError::Dropped),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_newest_subagent_runs_are_kept_and_other_conversations_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..5 {
            let p = dir.path().join(format!("subagent_1-{i}.jsonl"));
            std::fs::write(&p, "{}").unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i)).unwrap();
        }
        std::fs::write(dir.path().join("cli_local.jsonl"), "{}").unwrap();
        super::prune_subagent_runs(dir.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["cli_local.jsonl", "subagent_1-3.jsonl", "subagent_1-4.jsonl"]);
    }
}
