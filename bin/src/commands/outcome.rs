//! What a running engine made of a request (`raven wake`, `raven discover`): the first line
//! of one kind the decision journal gains after the request, printed as `raven log` prints
//! it. The waiting is bounded; past it, the command says where the outcome will show.

use super::log_line::line;
use crate::error::CliError;
use chrono_tz::Tz;
use raven_actors::data_dir::DataDir;
use raven_actors::journal::{Entry, JournalReader};
use std::time::{Duration, Instant};

/// How often the journal is looked at while waiting.
const POLL: Duration = Duration::from_millis(100);

/// A reader placed at the journal's end before the request is made, so nothing written
/// after it is missed.
pub struct Waiter {
    reader: JournalReader,
    kind: &'static str,
}

impl Waiter {
    pub fn before_request(dir: &DataDir, kind: &'static str) -> Waiter {
        Waiter { reader: JournalReader::from_end(dir.journal()), kind }
    }

    /// Waits up to `limit` for the outcome and prints it; says so when none came.
    pub fn print_outcome(mut self, limit: Duration, tz: Tz, what: &str) -> Result<(), CliError> {
        match self.wait(limit) {
            Some(entry) => {
                println!("{}", raven_actors::text::sanitize(&line(&entry, tz)));
                Ok(())
            }
            None => {
                println!("no {what} outcome within {} s; `raven log --follow` shows it when it comes", limit.as_secs());
                Ok(())
            }
        }
    }

    fn wait(&mut self, limit: Duration) -> Option<Entry> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            let lines = self.reader.poll().unwrap_or_default();
            let found = lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
                .find(|e| e.event.kind() == self.kind);
            if found.is_some() {
                return found;
            }
            std::thread::sleep(POLL);
        }
        None
    }
}
