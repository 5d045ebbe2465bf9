//! `raven cron add|list|rm|resume`: the user's jobs in `cron/jobs.json`, edited under its lock. A
//! running supervisor sees the edit at once (it watches the file) and re-arms its timer.

use super::load_config;
use crate::error::CliError;
use clap::{Args, Subcommand};
use raven_actors::cron::pause::PauseOutcome;
use raven_actors::cron::store::{JobsStore, Schedule};
use raven_actors::cron::tool::{describe, JobsCron, NewJob, WhenSpec};
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::targets::Channels;
use raven_actors::text::sanitize;

#[derive(Subcommand)]
pub enum CronCommand {
    /// Schedule a job; prints its id and first due time.
    Add(AddArgs),
    /// List the jobs: schedule, target, next fire or why paused, strikes.
    List {
        /// The jobs as jobs.json holds them, each with its run state (`state`: next and last
        /// run, runs, strikes, a pause), one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Remove a job by its id, or a unique prefix of 4 or more characters of it.
    Rm { id: String },
    /// Stop a job (by id or unique prefix) from firing until `raven cron resume`.
    Pause { id: String },
    /// Let a paused job (by id or unique prefix) fire again, from its next due time (strikes forgiven, no catch-up); a
    /// job set aside as unschedulable is refused with its reason.
    Resume { id: String },
}

#[derive(Args)]
pub struct AddArgs {
    /// What to remind of.
    message: String,
    /// Once, after this long: `90s`, `10m`, `1h 30m`, `90 minutes`, `2 hours`.
    #[arg(long = "in", value_name = "DURATION", group = "when")]
    in_: Option<String>,
    /// Once, at this time: `6pm`, `18:30`, `tomorrow at 9`, `friday 7pm`, `May 15 at 3pm`,
    /// `2026-05-15 15:00` or RFC 3339. A clock time already past today means tomorrow.
    #[arg(long, value_name = "TIME", group = "when")]
    at: Option<String>,
    /// Repeatedly: an interval (`10m`, `2 hours`) or a recurrence (`day at 9`, `weekday at 9`,
    /// `monday`, `month on the 20th`).
    #[arg(long, value_name = "WHEN", group = "when")]
    every: Option<String>,
    /// Repeatedly, on a 5- or 6-field cron expression or @hourly, @daily, @weekly, @monthly.
    #[arg(long, value_name = "EXPR", group = "when")]
    cron: Option<String>,
    /// The IANA zone the time is read in, for every form (default: the user's zone).
    #[arg(long)]
    tz: Option<String>,
    /// Deliver to `channel[:chat_id]` (a bare channel takes its latest chat at fire time).
    #[arg(long, default_value = "cli:local", conflicts_with_all = ["broadcast", "silent"])]
    to: String,
    /// Deliver to each of these targets (comma separated).
    #[arg(long, value_delimiter = ',', conflicts_with = "silent")]
    broadcast: Vec<String>,
    /// Run without telling anyone.
    #[arg(long)]
    silent: bool,
    /// The topic the NudgePolicy ledger files the fires under (default: from the message).
    #[arg(long)]
    topic: Option<String>,
}

/// The cron tool's arguments for the flags given: every form goes through the one time parser.
fn spec(a: &AddArgs) -> Result<WhenSpec, CliError> {
    let every =
        |d: &str| if d.starts_with("every") || d.starts_with('@') { d.to_owned() } else { format!("every {d}") };
    let tz = a.tz.clone();
    match (&a.in_, &a.at, &a.every, &a.cron) {
        (Some(d), ..) => {
            // Checked alone first, so an error quotes what was typed.
            raven_actors::time::parse_duration(d).map_err(CliError::BadDuration)?;
            Ok(WhenSpec { when: Some(format!("in {d}")), tz, ..WhenSpec::default() })
        }
        (_, Some(t), ..) => Ok(WhenSpec { when: Some(t.clone()), tz, ..WhenSpec::default() }),
        (_, _, Some(d), _) => Ok(WhenSpec { when: Some(every(d)), tz, ..WhenSpec::default() }),
        (_, _, _, Some(expr)) => Ok(WhenSpec { cron: Some(expr.clone()), tz, ..WhenSpec::default() }),
        _ => Err(CliError::refused("say when: --in, --at, --every or --cron")),
    }
}

/// `--in` and `--at` are once, `--every` and `--cron` again and again.
fn check_kind(a: &AddArgs, schedule: &Schedule) -> Result<(), CliError> {
    match (schedule.recurring(), a.in_.is_some() || a.at.is_some()) {
        (true, true) => Err(CliError::refused("that is a recurrence: say it with --every (or --cron)")),
        (false, false) => Err(CliError::refused("that is a single time: say it with --at (or --in)")),
        _ => Ok(()),
    }
}

pub fn run(c: CronCommand, dir: &DataDir) -> Result<(), CliError> {
    let config = match c {
        CronCommand::List { .. } => super::config_to_read(dir),
        _ => load_config(dir)?,
    };
    if !matches!(c, CronCommand::List { .. }) {
        dir.ensure_root().map_err(CliError::data_dir(dir.root()))?;
    }
    let jobs = JobsCron {
        store: JobsStore::new(dir.jobs()),
        tz: config.general.timezone,
        order: config.general.date_order,
        channels: Channels::of(&config),
    };
    match c {
        CronCommand::Add(a) => add(&jobs, a),
        CronCommand::List { json } => list(&jobs, json),
        CronCommand::Pause { id } => pause(&jobs, &id),
        CronCommand::Resume { id } => resume(&jobs, &id),
        CronCommand::Rm { id } => rm(&jobs, &id),
    }
}

fn add(jobs: &JobsCron, a: AddArgs) -> Result<(), CliError> {
    let now = chrono::Utc::now();
    let schedule = jobs.schedule(&spec(&a)?, now)?;
    check_kind(&a, &schedule)?;
    let target = (!a.silent && a.broadcast.is_empty()).then(|| a.to.clone());
    let typed = a.at.clone().or(a.every.clone()).unwrap_or_default();
    let new = NewJob { message: a.message, schedule, target, broadcast: a.broadcast, topic: a.topic };
    let job = jobs.insert(new, now)?;
    println!("{}  (times in {})", sanitize(&describe(&job, jobs.tz)), jobs.tz);
    if let Some(gap) = job.state.next_run_at.and_then(|at| raven_actors::time::skipped_clock(&typed, at, jobs.tz)) {
        super::note(format!("raven: note: {gap}"));
    }
    Ok(())
}

fn list(jobs: &JobsCron, json: bool) -> Result<(), CliError> {
    let file = jobs.store.load()?;
    if json {
        println!("{}", serde_json::to_string(&file.jobs)?);
        return Ok(());
    }
    if file.jobs.is_empty() {
        println!("no jobs");
    } else {
        println!("times in {}", jobs.tz);
    }
    // Soonest first; paused ones, and those with no next time, after, in the file's order.
    let mut shown: Vec<_> = file.jobs.iter().collect();
    shown.sort_by_key(|j| (!j.enabled || j.state.paused.is_some(), j.state.next_run_at.is_none(), j.state.next_run_at));
    for job in shown {
        println!("{}", sanitize(&describe(job, jobs.tz)));
    }
    Ok(())
}

fn pause(jobs: &JobsCron, given: &str) -> Result<(), CliError> {
    let id = full_id(&jobs.store, given)?;
    match jobs.store.pause(&id, "paused by raven cron pause")? {
        PauseOutcome::Done => println!("paused {id} (raven cron resume {id} lets it fire again)"),
        PauseOutcome::Already => println!("{id} is paused already"),
        PauseOutcome::NoSuchJob => return Err(no_job(&id)),
    }
    Ok(())
}

fn resume(jobs: &JobsCron, given: &str) -> Result<(), CliError> {
    let id = full_id(&jobs.store, given)?;
    // A job set aside as unschedulable is refused here, with its reason.
    match jobs.store.resume(&id, chrono::Utc::now())? {
        PauseOutcome::Done => println!("resumed {id}"),
        PauseOutcome::Already => println!("{id} is not paused: nothing to resume"),
        PauseOutcome::NoSuchJob => return Err(no_job(&id)),
    }
    Ok(())
}

fn rm(jobs: &JobsCron, given: &str) -> Result<(), CliError> {
    let id = full_id(&jobs.store, given)?;
    let gone = jobs.store.update(|f| {
        let before = f.jobs.len();
        f.jobs.retain(|j| j.id != id);
        before != f.jobs.len()
    })?;
    if !gone {
        return Err(no_job(&id));
    }
    println!("removed {id}");
    Ok(())
}

fn no_job(id: &str) -> CliError {
    CliError::refused(format!("no job {id} (see `raven cron list`)"))
}

/// The whole id of the job `given` names (its id or a unique prefix of 4 or more characters).
fn full_id(store: &JobsStore, given: &str) -> Result<String, CliError> {
    let file = store.load()?;
    Ok(raven_actors::cron::ids::resolve(&file.jobs, given)?.id.clone())
}
