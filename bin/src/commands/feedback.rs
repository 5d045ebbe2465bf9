//! `raven feedback`: a verdict on one proactive message, by the id shown beside it, or a
//! mute, an unmute or a snooze, written straight to the feedback log (no supervisor needed;
//! the next `raven policy explain` shows it).

use super::load_config;
use crate::error::CliError;
use clap::Args;
use raven_actors::agent::inbound::commands::{CommandCtx, FeedbackCommand};
use raven_actors::cron::later::Verdicts;
use raven_actors::data_dir::DataDir;
use raven_actors::feedback::give::GiveFeedback;
use raven_actors::feedback::NudgeFeedbackTracker;
use raven_actors::journal::Journal;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["id", "stop", "ok", "snooze"])))]
pub struct FeedbackArgs {
    /// The message: the short id shown beside it (`[raven ⏰ 3fa2c1]`) or its full id.
    #[arg(requires = "verdict")]
    id: Option<String>,
    /// accepted, dismissed, neutral, or later (put it off: it is sent again after
    /// `feedback.later_minutes`).
    verdict: Option<String>,
    /// Why (a dismissal whose reason says "stop" weighs more).
    #[arg(long)]
    reason: Option<String>,
    /// Mute a topic for `feedback.stop_mute_days` (as `/stop TOPIC`).
    #[arg(long, value_name = "TOPIC")]
    stop: Option<String>,
    /// Unmute a topic (as `/ok TOPIC`).
    #[arg(long, value_name = "TOPIC")]
    ok: Option<String>,
    /// No proactive message but cron for this long (`2h`, `30m`), or `off`.
    #[arg(long, value_name = "DURATION")]
    snooze: Option<String>,
}

pub fn run(a: FeedbackArgs, dir: &DataDir) -> Result<(), CliError> {
    let config = load_config(dir)?;
    dir.ensure_root().map_err(CliError::data_dir(dir.root()))?;
    let tz = config.general.timezone;
    let tracker =
        NudgeFeedbackTracker::new(dir.feedback(), config.feedback.clone(), tz).with_journal(Journal::in_data_dir(dir));
    let now = chrono::Utc::now();
    let command = match (&a.stop, &a.ok, &a.snooze) {
        (Some(t), _, _) => Some(FeedbackCommand::Stop(Some(t.trim().to_lowercase()))),
        (_, Some(t), _) => Some(FeedbackCommand::Ok(Some(t.trim().to_lowercase()))),
        (_, _, Some(d)) => {
            let text = format!("/snooze {d}");
            Some(
                raven_actors::agent::inbound::commands::parse(&text)
                    .ok_or_else(|| CliError::refused("not a snooze"))??,
            )
        }
        _ => None,
    };
    if let Some(command) = command {
        let lang = raven_actors::time::Language::English;
        let ctx = CommandCtx { tracker: &tracker, jobs: None, verdicts: None, session: None, tz, now, lang };
        println!("{}", ctx.apply(&command)?);
        return Ok(());
    }
    let req = GiveFeedback { nudge_id: a.id, session: None, verdict: a.verdict.unwrap_or_default(), reason: a.reason };
    let given = Verdicts::of(dir, &config).give(&tracker, &req, now)?;
    let topic = given.topic.clone().map(|t| format!(" (topic `{t}`)")).unwrap_or_default();
    println!("recorded {} for [{}] {}{topic}", given.verdict, given.short_id, given.nudge_id);
    if let (Some(at), Some(job)) = (given.again_at, &given.again_job) {
        println!("it comes again at {} ({tz}), sent by job {job}", raven_actors::time::local(at, tz));
    }
    println!("to undo: {}", given.undo);
    Ok(())
}
