//! `raven why <nudge id | topic | job id>`: the story of one item, from the decision journal,
//! in time order. A nudge is named by its full id or the short id shown beside it; an
//! argument that names more than one kind of item (a topic and a job) tells each story under
//! its heading.

use super::log::{load, Line};
use super::log_line::Printer;
use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_actors::feedback::short_id;
use raven_actors::journal::Entry;

/// The kinds of item an argument may name, in the order their stories are told.
const KINDS: [Kind; 3] = [Kind::Nudge, Kind::Topic, Kind::Job];

#[derive(Debug, Clone, Copy)]
enum Kind {
    Nudge,
    Topic,
    Job,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Nudge => "message",
            Kind::Topic => "topic",
            Kind::Job => "cron job",
        }
    }

    fn matches(self, e: &Entry, wanted: &str) -> bool {
        match self {
            Kind::Nudge => e.nudge_id().is_some_and(|id| id == wanted || short_id(id) == wanted.to_lowercase()),
            Kind::Topic => e.topic().is_some_and(|t| t.eq_ignore_ascii_case(wanted)),
            Kind::Job => e.job().is_some_and(|j| j == wanted),
        }
    }
}

pub fn run(item: String, dir: &DataDir) -> Result<(), CliError> {
    let tz = super::config_to_read(dir).general.timezone;
    let item = item.trim().trim_start_matches('[').trim_end_matches(']').to_owned();
    let lines = load(dir)?.ok_or_else(|| CliError::refused("no journal yet: nothing has been recorded"))?;
    let stories: Vec<(Kind, Vec<&Entry>)> =
        KINDS.iter().map(|k| (*k, story(&lines, *k, &item))).filter(|(_, s)| !s.is_empty()).collect();
    match stories.as_slice() {
        [] => Err(CliError::refused(format!(
            "nothing in the journal about `{item}` (a message id, a topic or a cron job id)"
        ))),
        [(_, one)] => {
            tell(one, &mut Printer::new(tz));
            Ok(())
        }
        many => {
            let kinds: Vec<_> = many.iter().map(|(k, _)| k.name()).collect();
            println!("`{item}` names a {}:", kinds.join(" and a "));
            for (kind, entries) in many {
                println!("\n{} `{item}`", kind.name());
                tell(entries, &mut Printer::new(tz));
            }
            Ok(())
        }
    }
}

/// The lines of one item, in time order.
fn story<'a>(lines: &'a [Line], kind: Kind, item: &str) -> Vec<&'a Entry> {
    let mut entries: Vec<&Entry> =
        lines.iter().filter_map(|l| l.entry.as_ref()).filter(|e| kind.matches(e, item)).collect();
    entries.sort_by_key(|e| e.at);
    entries
}

fn tell(entries: &[&Entry], printer: &mut Printer) {
    for e in entries {
        printer.print(e);
    }
}
