pub mod channels;
pub mod config;
pub mod cron;
pub mod discover;
pub mod feedback;
pub mod gateway;
pub mod init;
pub mod log;
mod log_line;
pub mod memory;
pub mod metrics;
pub mod outbox;
mod outcome;
pub mod policy;
pub mod repl;
pub mod say;
pub mod send;
pub mod service;
pub mod simulate;
pub mod state;
pub mod status;
pub mod tick;
pub mod up;
pub mod wake;
pub mod why;

use crate::error::CliError;
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::{DataDir, DryRun};

/// The effective config of a data dir, or a message naming the file and the key. A running
/// supervisor's zone wins over the one this process would resolve, so every client shows times
/// in the zone the engine works in.
pub fn load_config(dir: &DataDir) -> Result<RavenConfig, CliError> {
    let (mut config, _) = RavenConfig::load(&dir.config())?;
    if let Some(zone) = raven_actors::time::zone::published(&dir.zone()) {
        let own = &config.general;
        if own.timezone_source == raven_actors::time::ZoneSource::TzVariable && own.timezone != zone.tz {
            note(format!(
                "raven: times are in {} (the running supervisor's zone), not in {} (your TZ); \
                 set general.timezone in config.toml to name one zone for both",
                zone.tz, own.timezone
            ));
        }
        config.set_zone(&zone);
    }
    Ok(config)
}

/// The config of a command that only reads (`cron list`, `log`, `why`, `memory dates`,
/// `outbox`): a config.toml that does not check is said on stderr, and the defaults are used
/// (with the zone the file names, when it names a valid one), so a typo never hides what is
/// scheduled or what was decided. Every command that acts still refuses the file.
pub fn config_to_read(dir: &DataDir) -> RavenConfig {
    let error = match load_config(dir) {
        Ok(config) => return config,
        Err(e) => e,
    };
    let mut config = RavenConfig::default();
    let text = std::fs::read_to_string(dir.config()).unwrap_or_default();
    let named = toml::from_str::<toml::Table>(&text).ok().and_then(|t| {
        let zone = t.get("general")?.get("timezone")?.as_str()?.parse::<chrono_tz::Tz>().ok()?;
        Some((zone, dir.config()))
    });
    let zone = match raven_actors::time::zone::published(&dir.zone()) {
        Some(running) => running,
        None => raven_actors::time::resolve(
            named.as_ref().map(|(tz, path)| (*tz, path.as_path())),
            std::env::var("TZ").ok().as_deref(),
            std::path::Path::new(raven_actors::time::LOCALTIME),
        ),
    };
    config.set_zone(&zone);
    note(format!(
        "raven: warning: {error}\nraven: shown with the default config (times in {}); fix it before the next `raven up` (`raven config show` reads it again)",
        zone.tz
    ));
    config
}

/// A private copy of `dir` for a command run at a pretended time (`--at`): the engine runs
/// there and the data dir is left as it was. The first line on stdout says so.
pub fn dry_run(dir: &DataDir) -> Result<DryRun, CliError> {
    let dry = DryRun::of(dir)?;
    println!("dry run (nothing is saved)");
    Ok(dry)
}

/// A warning about the zone (an invalid `TZ`, an unreadable system zone), once, on stderr.
pub fn warn_about_zone(config: &RavenConfig) {
    if let Some(w) = &config.general.timezone_warning {
        note(format!("raven: warning: {w}"));
    }
}

/// A line on stderr for the operator. Unlike `eprintln!` it never panics: a long-running
/// process must outlive the terminal (or test) that started it.
pub fn note(line: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The running supervisor's control socket, or a message saying how to start one.
pub async fn connect_supervisor(dir: &DataDir) -> Result<raven_actors::ipc::ControlClient, CliError> {
    let socket = dir.socket();
    raven_actors::ipc::ControlClient::connect(&socket).await.map_err(|source| CliError::NoSupervisor { socket, source })
}
