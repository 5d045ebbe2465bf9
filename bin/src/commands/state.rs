//! `raven state`: a look inside the engine's state database (`state.db` in the data dir).
//! `export` prints what it holds (for a person, or `--json` for a script): the outbox and its
//! dead letters, each cron job's run state, and each owner's sections (the gate's ledger and
//! learned feedback, the queues, discovery's state, the decision cache); `check` runs SQLite's
//! full integrity check.
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
    /// Print what the state database holds: the outbox (waiting and dead letters), each cron
    /// job's run state, the gate's ledger and learned feedback, the queues, discovery's state
    /// and the decision cache.
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
    let sections = sections(dir)?;
    if json {
        let out = serde_json::json!({ "path": path, "outbox": outbox, "cron": cron, "sections": sections });
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
    println!("sections: {}", sections.values().map(|s| s.as_object().map_or(0, |s| s.len())).sum::<usize>());
    for (owner, of_owner) in &sections {
        for (section, value) in of_owner.as_object().into_iter().flatten() {
            println!("  {:<15} {:<20} {}", owner, section, sanitize(&summary(value)));
        }
    }
    Ok(())
}

/// Every owner's sections as JSON, by owner and section (none before the first write).
fn sections(dir: &DataDir) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    let mut out = serde_json::Map::new();
    let Some(db) = Database::open_read_only(&dir.state_db()).map_err(StoreError::from)? else { return Ok(out) };
    for (owner, section, text) in raven_actors::store::sections::everything(&db)? {
        let value = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        let of_owner = out.entry(owner).or_insert_with(|| serde_json::json!({}));
        if let Some(map) = of_owner.as_object_mut() {
            map.insert(section, value);
        }
    }
    Ok(out)
}

/// One line about a section for a person: its fields, a list by its length.
fn summary(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let field = |(k, v): (&String, &Value)| match v {
        Value::Array(a) => format!("{k}: {} items", a.len()),
        Value::Object(o) => format!("{k}: {} fields", o.len()),
        other => format!("{k}: {other}"),
    };
    let line = match value {
        Value::Object(o) => o.iter().map(field).collect::<Vec<_>>().join(", "),
        Value::Array(a) => format!("{} items", a.len()),
        other => other.to_string(),
    };
    match line.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
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
