//! `raven init`: a starter data dir, so that `raven up` is useful at once: a config.toml with
//! the Sentinel on and every common choice written out commented, a MEMORY.md and a
//! HEARTBEAT.md with examples to edit. A file that exists is kept as it is (and said so).

use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use std::path::Path;

const CONFIG: &str = r#"# Raven's settings. Every key has a default; the commented lines show the usual choices.
# The whole list is in docs/configuration.md. Most keys apply while raven up runs.

[general]
# Your zone (else the system's): times in notes and reminders are read in it.
# timezone = "Europe/Paris"

[sentinel]
# The proactive tick: reads your notes and decides whether anything is worth saying.
enabled = true
interval_s = 300

[policy.quiet_hours]
# Nothing proactive in these hours (your own reminders still come).
start = "23:00"
end = "07:00"

# One message each morning with the day: today's items and the heads-ups whose time has come.
# It comes when quiet hours end; set a time ("08:30") or turn it off.
# [brief]
# at = "auto"
# enabled = true

# A language model (any OpenAI-compatible endpoint). Without one Raven works on its own rules.
# [llm]
# base_url = "https://api.openai.com/v1"
# model = "gpt-4o-mini"
# api_key_env = "OPENAI_API_KEY"

# Your phone. Set the token in the environment variable named here, then run
# `raven channels test telegram`.
# [channels.telegram]
# enabled = true
# token_env = "RAVEN_TELEGRAM_TOKEN"
# allowed_users = ["123456789"]

# [channels.ntfy]
# enabled = true
# topic = "raven-something-hard-to-guess"
"#;

const HEARTBEAT: &str = "# Heartbeat\n\n\
Open tasks here are reviewed every 30 minutes; a checked one is done.\n\n\
- [ ] Check whether the parcel tracking has news\n";

/// The starter MEMORY.md: a deadline an hour from now, in the user's zone, so the first
/// `raven up` has something to say.
fn memory(now_local: chrono::NaiveDateTime) -> String {
    let due = (now_local + chrono::Duration::hours(1)).format("%Y-%m-%d %H:%M");
    format!(
        "# Memory\n\n\
         Raven reads this file: deadlines, events and what you care about, in your own words.\n\
         A line like the one below is reminded ahead of its time. Edit freely.\n\n\
         - [ ] Try Raven (an example line: edit or delete it) due: {due} !high\n"
    )
}

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    dir.ensure().map_err(CliError::data_dir(dir.root()))?;
    let tz = super::load_config(dir).map(|c| c.general.timezone).unwrap_or(chrono_tz::UTC);
    let now_local = chrono::Utc::now().with_timezone(&tz).naive_local();
    let files =
        [(dir.config(), CONFIG.to_owned()), (dir.memory(), memory(now_local)), (dir.heartbeat(), HEARTBEAT.into())];
    println!("Raven's data dir: {}", dir.root().display());
    for (path, text) in files {
        println!("{}", write_new(&path, &text)?);
    }
    println!(
        "\nThe example deadline is an hour from now in {tz}; if you set another zone (general.timezone), \
         move that line's time with it."
    );
    println!(
        "\nNext:\n  1. raven up            runs Raven (the Sentinel is on: the example deadline is reminded)\n  \
         2. edit {}   your own deadlines and notes\n  3. raven service install  keeps it running after you log out",
        dir.memory().display()
    );
    Ok(())
}

/// Writes `text` to `path` unless a file is there; what was done, for the user.
fn write_new(path: &Path, text: &str) -> Result<String, CliError> {
    if path.exists() {
        return Ok(format!("  kept     {} (it exists; nothing changed)", path.display()));
    }
    raven_actors::store::write_atomic_private(path, text.as_bytes()).map_err(CliError::data_dir(path))?;
    Ok(format!("  wrote    {}", path.display()))
}
