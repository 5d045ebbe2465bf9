//! `raven cron add|list|rm`: the user's jobs in `cron/jobs.json`, edited under its lock. A
//! running supervisor sees the edit at once (it watches the file) and re-arms its timer.

use super::load_config;
use clap::{Args, Subcommand};
use raven_actors::cron::store::JobsStore;
use raven_actors::cron::tool::{describe, JobsCron, NewJob};
use raven_actors::data_dir::DataDir;
use serde_json::json;

#[derive(Subcommand)]
pub enum CronCommand {
    /// Schedule a job; prints its id and first due time.
    Add(AddArgs),
    /// List the jobs: schedule, target, next fire or why paused, strikes.
    List,
    /// Remove a job by id.
    Rm { id: String },
}

#[derive(Args)]
pub struct AddArgs {
    /// What to remind of.
    message: String,
    /// Once, after this long (`90s`, `10m`, `1h 30m`).
    #[arg(long = "in", value_name = "DURATION", group = "when")]
    in_: Option<String>,
    /// Once, at this time: RFC 3339, or HH:MM local (today, else tomorrow).
    #[arg(long, value_name = "TIME", group = "when")]
    at: Option<String>,
    /// Repeatedly, at this interval.
    #[arg(long, value_name = "DURATION", group = "when")]
    every: Option<String>,
    /// Repeatedly, on this 5- or 6-field cron expression.
    #[arg(long, value_name = "EXPR", group = "when")]
    cron: Option<String>,
    /// The IANA zone of `--cron` (default: `general.timezone`).
    #[arg(long, requires = "cron")]
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

fn seconds(text: &str) -> Result<u64, String> {
    let d = humantime::parse_duration(text)
        .map_err(|e| format!("`{text}` is not a duration ({e}); say e.g. 90s, 10m, 2h"))?;
    match d.as_secs() {
        0 => Err(format!("`{text}` is shorter than a second")),
        s => Ok(s),
    }
}

fn spec(a: &AddArgs) -> Result<serde_json::Value, String> {
    Ok(match (&a.in_, &a.at, &a.every, &a.cron) {
        (Some(d), ..) => json!({ "in_s": seconds(d)? }),
        (_, Some(t), ..) if t.len() == 5 && t.as_bytes()[2] == b':' => json!({ "at_local": t }),
        (_, Some(t), ..) => json!({ "at": t }),
        (_, _, Some(d), _) => json!({ "every_s": seconds(d)? }),
        (_, _, _, Some(expr)) => json!({ "cron": expr, "tz": a.tz }),
        _ => return Err("say when: --in, --at, --every or --cron".into()),
    })
}

pub fn run(c: CronCommand, dir: &DataDir) -> Result<(), String> {
    let config = load_config(dir)?;
    let jobs = JobsCron { store: JobsStore::new(dir.jobs()), tz: config.general.timezone };
    match c {
        CronCommand::Add(a) => {
            let now = chrono::Utc::now();
            let schedule = jobs.schedule(&spec(&a)?, now)?;
            let target = (!a.silent && a.broadcast.is_empty()).then(|| a.to.clone());
            let new = NewJob { message: a.message, schedule, target, broadcast: a.broadcast, topic: a.topic };
            let job = jobs.insert(new, now)?;
            println!("{}", describe(&job));
        }
        CronCommand::List => {
            let file = jobs.store.load().map_err(|e| e.to_string())?;
            if file.jobs.is_empty() {
                println!("no jobs");
            }
            for job in &file.jobs {
                println!("{}", describe(job));
            }
        }
        CronCommand::Rm { id } => {
            let gone = jobs.store.update(|f| {
                let before = f.jobs.len();
                f.jobs.retain(|j| j.id != id);
                before != f.jobs.len()
            });
            match gone.map_err(|e| e.to_string())? {
                true => println!("removed {id}"),
                false => return Err(format!("no job {id} (see `raven cron list`)")),
            }
        }
    }
    Ok(())
}
