//! `raven memory dates`: the dates the engine finds in `workspace/MEMORY.md`, as every reader
//! of deadlines sees them (line, when, kind, done), so a user can check that a note is read the
//! way they meant it.

use crate::error::CliError;
use clap::Subcommand;
use raven_actors::context::deadlines::lead_words;
use raven_actors::cron::store::Schedule;
use raven_actors::data_dir::DataDir;
use raven_actors::time::{find_dates, local, DateKind, FoundDate};

#[derive(Subcommand)]
pub enum MemoryCommand {
    /// List the dated lines of MEMORY.md: line, date, kind (deadline, event, duty), done.
    Dates {
        /// One JSON array (times in RFC 3339) instead of lines for people.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: MemoryCommand, dir: &DataDir) -> Result<(), CliError> {
    let MemoryCommand::Dates { json } = cmd;
    let config = super::config_to_read(dir);
    let path = dir.memory();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(CliError::File { path, source }),
    };
    let (tz, order) = (config.general.timezone, config.general.date_order);
    let ladder = config.anticipation.ladder();
    // A line that asks for no lead has the one its kind gets (`[anticipation]`).
    let found: Vec<FoundDate> = find_dates(&text, chrono::Utc::now(), tz, order)
        .into_iter()
        .map(|f| FoundDate { lead: f.lead_by(&ladder), ..f })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&found)?);
        return Ok(());
    }
    if found.is_empty() {
        println!("no dates in {}", path.display());
        return Ok(());
    }
    println!("{} (times in {tz})", path.display());
    for f in &found {
        println!("{}", line(f, tz));
    }
    Ok(())
}

/// `line 3   2026-05-15 15:00  event     Dentist`, a whole day without its time, a duty with
/// its recurrence, a done one marked.
fn line(f: &FoundDate, tz: chrono_tz::Tz) -> String {
    let when = match f.all_day {
        true => local(f.at, tz)[..10].to_owned() + "      ",
        false => local(f.at, tz),
    };
    let kind = match f.kind {
        DateKind::Deadline => "deadline",
        DateKind::Event => "event",
        DateKind::Duty => "duty",
    };
    let done = if f.done { "  (done)" } else { "" };
    let every = f.recurrence.as_ref().map(|r| recurrence_in_words(r, tz)).map(|words| match f.all_day {
        // An untimed duty is due at the end of its day: that is not a time anyone wrote.
        true => format!("  [{}, all day]", words.replacen(" at 23:59", "", 1)),
        false => format!("  [{words}]"),
    });
    let every = every.unwrap_or_default();
    let ahead = f
        .lead
        .filter(|l| *l > chrono::Duration::hours(24))
        .map(|l| {
            let why = match f.lead_for {
                Some(need) => format!("as for {}", need.words()),
                None => "as the line asks".to_owned(),
            };
            format!("  [heads-up from {}: {} before, {why}]", day(f.at - l, tz), lead_words(l))
        })
        .unwrap_or_default();
    format!("line {:<4} {when}  {kind:<8}  {}{every}{ahead}{done}", f.line, f.title)
}

/// A duty's recurrence as its schedule reads in words (`every weekday at 09:00`; every two
/// weeks: `every other Monday at 09:00 from 2026-03-02`, without the date when none was written).
fn recurrence_in_words(expr: &str, tz: chrono_tz::Tz) -> String {
    let words = |cron: &str| {
        let schedule = Schedule::Cron { expr: cron.to_owned(), tz: tz.name().to_owned() };
        raven_actors::cron::words::in_words(&schedule, tz)
    };
    match expr.split_once(" every 2 weeks from ") {
        Some((cron, from)) => {
            let every = words(cron);
            let other = every.strip_prefix("every ").map_or(every.clone(), |rest| format!("every other {rest}"));
            match from {
                // The weeks of a line that wrote no start (see `raven_core::time::dates`).
                "1970-01-05" => other,
                from => format!("{other} from {from}"),
            }
        }
        None => words(expr),
    }
}

fn day(t: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> String {
    t.with_timezone(&tz).format("%a %-d %b").to_string()
}
