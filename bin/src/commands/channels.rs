//! `raven channels`: the chat channels of `[channels.*]` and how each is doing (as the
//! gateway last wrote it); `raven channels test <name>` builds that channel from config.toml
//! and sends a test message through it, in this process, and says what happened.

use super::load_config;
use crate::error::CliError;
use clap::Subcommand;
use raven_actors::channels::health::HealthBoard;
use raven_actors::config::CHANNEL_NAMES;
use raven_actors::data_dir::DataDir;

#[derive(Subcommand)]
pub enum ChannelsCommand {
    /// Each channel: enabled or not, and its health.
    List,
    /// Send a test message through one channel (telegram, matrix, ntfy, email).
    Test {
        #[arg(value_parser = CHANNEL_NAMES)]
        name: String,
    },
}

pub fn run(c: Option<ChannelsCommand>, dir: &DataDir) -> Result<(), CliError> {
    match c.unwrap_or(ChannelsCommand::List) {
        ChannelsCommand::List => list(dir),
        ChannelsCommand::Test { name } => test(dir, &name),
    }
}

fn list(dir: &DataDir) -> Result<(), CliError> {
    let config = load_config(dir)?;
    let enabled = config.channels.enabled();
    let health = HealthBoard::read(dir);
    for name in CHANNEL_NAMES {
        let line = match (enabled.contains(&name), health.get(name)) {
            (false, _) => "off".to_owned(),
            (true, None) => format!("enabled, {}", super::status::NOT_STARTED),
            (true, Some(h)) => super::status::channel_health(h),
        };
        println!("{name:<9} {line}");
    }
    if enabled.is_empty() {
        println!("{}", how_to_add());
    }
    Ok(())
}

/// One line on how to reach the user beyond the terminal.
pub fn how_to_add() -> &'static str {
    "no chat channel is set up: nudges reach you only while a terminal shows them (`raven repl`), and wait \
     in the outbox otherwise; add one with [channels.telegram] (or matrix, ntfy, email) in config.toml: \
     see docs/channels.md"
}

fn test(dir: &DataDir, name: &str) -> Result<(), CliError> {
    let config = load_config(dir)?;
    if !config.channels.enabled().contains(&name) {
        return Err(CliError::refused(format!(
            "the {name} channel is not enabled: set `[channels.{name}] enabled = true` in {}",
            dir.config().display()
        )));
    }
    // A channel may keep its login in the data dir: private before anything is written there.
    dir.ensure_root().map_err(CliError::data_dir(dir.root()))?;
    let adapter = raven_actors::channels::build(dir, &config, name)
        .map_err(|source| CliError::Channel { name: name.to_owned(), source })?;
    let said = actix_rt::System::new().block_on(async move { adapter.test().await });
    match said {
        Ok(words) => {
            println!("{name}: {words}");
            Ok(())
        }
        Err(source) => Err(CliError::ChannelTest { name: name.to_owned(), source }),
    }
}
