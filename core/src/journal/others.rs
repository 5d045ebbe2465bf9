//! The verdicts other processes record (the gateway's buttons, reactions and taps,
//! `POST /feedback`, `raven feedback`), counted in this process's metrics: the supervisor
//! follows the journal from where it ended when it started, and counts the verdict lines
//! another process wrote each time its metrics are read.

use super::{Entry, Event, Journal, JournalReader};
use crate::supervise::Counters;
use std::sync::Mutex;

/// Follows the journal for verdicts written by other processes.
#[derive(Debug)]
pub struct OthersVerdicts {
    reader: Mutex<JournalReader>,
    counters: Counters,
    me: u32,
}

impl OthersVerdicts {
    /// From the current end of `journal`'s file, into `counters` (`None`: a journal that is off).
    pub fn follow(journal: &Journal, counters: &Counters) -> Option<OthersVerdicts> {
        let reader = JournalReader::from_end(journal.path()?);
        Some(OthersVerdicts { reader: Mutex::new(reader), counters: counters.clone(), me: std::process::id() })
    }

    /// Counts the verdicts other processes appended since the last call; returns how many.
    pub fn count(&self) -> usize {
        let Ok(mut reader) = self.reader.lock() else { return 0 };
        let lines = match reader.poll() {
            Ok(lines) => lines,
            Err(e) => {
                tracing::debug!("the journal was not read for verdicts: {e}");
                return 0;
            }
        };
        let foreign = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
            .filter(|e| e.pid != Some(self.me) && matches!(e.event, Event::Verdict(_)));
        foreign.map(|e| self.counters.observe(e.source.as_deref(), &e.event)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::VerdictGiven;
    use chrono::Utc;
    use std::io::Write;

    fn verdict(verdict: &str) -> Event {
        Event::Verdict(VerdictGiven {
            nudge_id: "n1".into(),
            verdict: verdict.into(),
            topic: Some("water".into()),
            reason: None,
            job: None,
        })
    }

    fn counted(counters: &Counters, verdict: &str) -> f64 {
        let mut registry = prometheus_client::registry::Registry::default();
        counters.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let line = format!("raven_feedback_verdicts_total{{verdict=\"{verdict}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(&line)).and_then(|v| v.trim().parse().ok()).unwrap_or(-1.0)
    }

    #[test]
    fn a_verdict_another_process_wrote_is_counted_once_and_this_processs_own_not_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("journal.jsonl");
        let mine = Counters::default();
        let journal = Journal::at(&path).counting(&mine);
        journal.record(Utc::now(), Some("user"), verdict("dismissed"));
        let others = OthersVerdicts::follow(&journal, &mine).unwrap();

        journal.record(Utc::now(), Some("user"), verdict("accepted"));
        let gateway = Entry { at: Utc::now(), source: Some("user".into()), pid: Some(1), event: verdict("later") };
        let line = serde_json::to_string(&gateway).unwrap() + "\n";
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(line.as_bytes()).unwrap();

        assert_eq!(others.count(), 1, "only the other process's line");
        assert_eq!(others.count(), 0, "each line once");
        assert_eq!(counted(&mine, "later"), 1.0);
        assert_eq!(counted(&mine, "accepted"), 1.0, "this process counted its own when it recorded it");
        assert_eq!(counted(&mine, "dismissed"), 1.0, "what was there before following is not read again");
    }
}
