//! `raven outbox`: what waits for an outlet, and the dead letters (messages past their time
//! or pushed out by the bound); `raven outbox drop` takes them away. It works on the state
//! database directly, in one transaction, with or without a supervisor. What it prints for a person comes
//! from remote services (an error's text) and from the engine: its escape sequences are taken out.

use super::load_config;
use crate::error::CliError;
use clap::{Args, Subcommand};
use raven_actors::data_dir::DataDir;
use raven_actors::delivery::outbox::{self, OutboxStore};
use raven_actors::text::sanitize;

#[derive(Args)]
pub struct OutboxArgs {
    #[command(subcommand)]
    command: Option<OutboxCommand>,
    /// The dead letters instead of what waits.
    #[arg(long)]
    dead: bool,
    /// As JSON (times in RFC 3339).
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum OutboxCommand {
    /// Drop one message (waiting or dead) by its delivery id, or every dead letter.
    Drop {
        #[arg(required_unless_present = "dead", conflicts_with = "dead")]
        id: Option<String>,
        #[arg(long)]
        dead: bool,
    },
}

pub fn run(a: OutboxArgs, dir: &DataDir) -> Result<(), CliError> {
    let config = match a.command {
        Some(OutboxCommand::Drop { .. }) => load_config(dir)?,
        None => super::config_to_read(dir),
    };
    let tz = config.general.timezone;
    if let Some(OutboxCommand::Drop { id, dead }) = a.command {
        dir.ensure_root().map_err(CliError::data_dir(dir.root()))?;
        let store = outbox::open_in(dir)?;
        let dropped = match &id {
            Some(id) => usize::from(store.drop_id(id)?),
            None => store.drop_dead()?,
        };
        match (id, dead) {
            (Some(id), _) if dropped == 0 => {
                return Err(CliError::refused(format!("no message {id} in the outbox (see `raven outbox`)")))
            }
            (Some(id), _) => println!("dropped {id}"),
            (None, _) => println!("dropped {dropped} dead letters"),
        }
        return Ok(());
    }
    // Read only: a corrupt file is said and left where it is.
    let (outbox, unreadable) = outbox::peek_in(dir)?;
    if let Some(note) = unreadable {
        eprintln!("note: {note}");
    }
    let shown = |t| raven_actors::time::local(t, tz);
    if a.json {
        let v = if a.dead { serde_json::to_value(&outbox.dead) } else { serde_json::to_value(&outbox.entries) };
        println!("{}", v?);
        return Ok(());
    }
    if a.dead {
        println!("{} dead letters (times in {tz})", outbox.dead.len());
        for d in &outbox.dead {
            let t = &d.entry.text;
            let (id, chat) = (sanitize(&t.delivery_id), sanitize(&t.chat_id));
            println!("{id}  {}:{chat}  {}  {:?}  ({})", t.channel, shown(d.at), t.content, sanitize(&d.why));
        }
    } else {
        println!("{} waiting (times in {tz})", outbox.entries.len());
        for e in &outbox.entries {
            let t = &e.text;
            let until = e.expires_at.map(|x| format!(", dead after {}", shown(x))).unwrap_or_default();
            println!(
                "{}  {}:{}  {} attempts, next {}{until}  {:?}  (last: {})",
                sanitize(&t.delivery_id),
                t.channel,
                sanitize(&t.chat_id),
                e.attempts,
                shown(e.next_attempt_at),
                t.content,
                sanitize(&e.last_error)
            );
        }
    }
    Ok(())
}
