//! `raven state`: a look inside the engine's state database (`state.db` in the data dir).
//! `export` prints what it holds (for a person, or `--json` for a script): the outbox and its
//! dead letters, and each cron job's run state; `check` runs SQLite's full integrity check.
//! Both only read: nothing is created, moved or written.

use crate::error::CliError;
use clap::Subcommand;
use raven_actors::cron::store::JobsStore;
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outbox;
use raven_actors::store::db::Database;
use raven_actors::store::StoreError;
use raven_actors::text::sanitize;

#[derive(Subcommand)]
pub enum StateCommand {
    /// Print what the state database holds: the outbox (waiting and dead letters) and each
    /// cron job's run state.
    Export {
        /// As JSON (times in RFC 3339), for a script.
        #[arg(long)]
        json: bool,
    },
    /// Run SQLite's integrity check on the state database (exit 1 when it finds damage).
    Check,
}

pub fn run(command: StateCommand, dir: &DataDir) -> Result<(), CliError> {
    match command {
        StateCommand::Export { json } => export(dir, json),
        StateCommand::Check => check(dir),
    }
}

fn export(dir: &DataDir, json: bool) -> Result<(), CliError> {
    let path = dir.state_db();
    let (outbox, note) = outbox::peek_in(dir)?;
    // The jobs' run state, by job (a jobs.json that does not parse is said, not fatal).
    let (jobs, jobs_note) = match JobsStore::new(dir.jobs()).load() {
        Ok(file) => (file.jobs, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let cron: Vec<_> = jobs.iter().map(|j| serde_json::json!({ "id": j.id, "state": j.state })).collect();
    if json {
        let out = serde_json::json!({ "path": path, "outbox": outbox, "cron": cron });
        println!("{out}");
        return Ok(());
    }
    for note in note.iter().chain(&jobs_note) {
        eprintln!("note: {}", sanitize(note));
    }
    let shown = if path.exists() { path.display().to_string() } else { format!("{} (not made yet)", path.display()) };
    println!("state database: {}", sanitize(&shown));
    println!("outbox: {} waiting, {} dead letters", outbox.entries.len(), outbox.dead.len());
    for e in &outbox.entries {
        let t = &e.text;
        println!(
            "  waiting  {}  {}:{}  {} attempts",
            sanitize(&t.delivery_id),
            t.channel,
            sanitize(&t.chat_id),
            e.attempts
        );
    }
    for d in &outbox.dead {
        let t = &d.entry.text;
        println!(
            "  dead     {}  {}:{}  {}",
            sanitize(&t.delivery_id),
            t.channel,
            sanitize(&t.chat_id),
            d.at.to_rfc3339()
        );
    }
    println!("cron: {} jobs", jobs.len());
    for j in &jobs {
        let s = &j.state;
        let next = s.next_run_at.map(|t| t.to_rfc3339()).unwrap_or_else(|| "-".into());
        let paused = s.paused.as_ref().map(|p| format!("  paused: {p}")).unwrap_or_default();
        println!(
            "  job      {}  runs {}  strikes {}  next {next}{}",
            sanitize(&j.id),
            s.runs,
            s.strikes,
            sanitize(&paused)
        );
    }
    Ok(())
}

fn check(dir: &DataDir) -> Result<(), CliError> {
    let path = dir.state_db();
    let Some(db) = Database::open_read_only(&path).map_err(StoreError::from)? else {
        println!("no state database yet ({}): nothing to check", path.display());
        return Ok(());
    };
    let found = db.check().map_err(StoreError::from)?;
    if found == ["ok"] {
        println!("ok: {}", path.display());
        return Ok(());
    }
    for line in &found {
        println!("{}", sanitize(line));
    }
    Err(CliError::refused(format!(
        "{} is damaged ({} problems found); stop raven and start it again: it moves a damaged database aside and starts clean",
        path.display(),
        found.len()
    )))
}
