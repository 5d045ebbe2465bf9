//! `raven log`: the decision journal (`journal.jsonl.1`, then `journal.jsonl`) as people read
//! it, one line per event in the user's zone; `--json` prints the lines as written, `--since`
//! keeps the recent ones, `--follow` keeps printing what is appended.

use super::log_line::Printer;
use super::note;
use crate::error::CliError;
use chrono::{DateTime, Utc};
use clap::Args;
use raven_actors::data_dir::DataDir;
use raven_actors::journal::{read_all, Entry, JournalReader};
use raven_actors::time::{parse_duration, parse_instant, DateOrder};

/// How often `--follow` looks for new lines.
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(200);

#[derive(Args)]
pub struct LogArgs {
    /// Only what happened since: a duration back from now (`2h`, `30m`) or a time (`09:00`,
    /// `yesterday at 9`, `2026-03-02 12:00`, RFC 3339).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Keep printing new lines as they are appended (until interrupted).
    #[arg(long, short)]
    follow: bool,
    /// The journal's JSON lines as written.
    #[arg(long)]
    json: bool,
}

/// One kept line: as written, and as read (`None` when it does not parse).
pub struct Line {
    pub raw: String,
    pub entry: Option<Entry>,
}

impl Line {
    fn of(raw: String) -> Line {
        let entry = serde_json::from_str(&raw).ok();
        Line { raw, entry }
    }
}

/// Every kept line, oldest first; `None` when there is no journal yet.
pub fn load(dir: &DataDir) -> Result<Option<Vec<Line>>, CliError> {
    let lines = read_all(&dir.journal()).map_err(CliError::file(dir.journal()))?;
    Ok(lines.map(|ls| ls.into_iter().map(Line::of).collect()))
}

pub fn run(a: LogArgs, dir: &DataDir) -> Result<(), CliError> {
    let config = super::config_to_read(dir);
    let (tz, order) = (config.general.timezone, config.general.date_order);
    let since = a.since.as_deref().map(|s| since(s, Utc::now(), tz, order)).transpose()?;
    let mut out = Output { json: a.json, since, printer: Printer::new(tz) };
    match load(dir)? {
        Some(lines) => lines.iter().for_each(|l| out.show(l)),
        None if !a.follow => note("no journal yet"),
        None => {}
    }
    if a.follow {
        follow(dir, &mut out);
    }
    Ok(())
}

/// `2h` is two hours back from `now`; anything else is a time the shared parser reads.
fn since(input: &str, now: DateTime<Utc>, tz: chrono_tz::Tz, order: DateOrder) -> Result<DateTime<Utc>, CliError> {
    if let Ok(back) = parse_duration(input) {
        return Ok(now - back);
    }
    parse_instant(input, now, tz, order).map_err(CliError::bad_time("--since"))
}

struct Output {
    json: bool,
    since: Option<DateTime<Utc>>,
    printer: Printer,
}

impl Output {
    /// A line that does not parse is left out (its neighbours are whole).
    fn show(&mut self, line: &Line) {
        let Some(entry) = &line.entry else { return };
        if self.since.is_some_and(|s| entry.at < s) {
            return;
        }
        if self.json {
            println!("{}", line.raw);
        } else {
            self.printer.print(entry);
        }
    }
}

/// Polls for appended lines until the process is stopped; a rotation starts over at the new
/// file.
fn follow(dir: &DataDir, out: &mut Output) -> ! {
    let mut reader = JournalReader::from_end(dir.journal());
    loop {
        match reader.poll() {
            Ok(lines) => lines.into_iter().map(Line::of).for_each(|l| out.show(&l)),
            Err(e) => note(format!("raven: {}: {e}", dir.journal().display())),
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}
