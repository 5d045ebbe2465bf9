//! `raven config show`: the effective config, each value with where it came from.

use crate::error::CliError;
use clap::Subcommand;
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print every key with its effective value and its origin (default or the file).
    Show,
}

pub fn run(cmd: ConfigCommand, dir: &DataDir) -> Result<(), CliError> {
    match cmd {
        ConfigCommand::Show => {
            let path = dir.config();
            let (_, mut provenance) = RavenConfig::load(&path)?;
            let config = super::load_config(dir)?;
            provenance.set_zone_of(&config);
            super::warn_about_zone(&config);
            let presence = if path.exists() { "" } else { " (not present: all defaults)" };
            println!("# data dir: {}\n# config:   {}{presence}", dir.root().display(), path.display());
            let g = &config.general;
            println!("# zone:     {} (from {})", g.timezone.name(), g.timezone_source);
            print!("{}", provenance.render());
            print_preference_notes(dir);
            Ok(())
        }
    }
}

/// What the preference sources say that the gate cannot use (a line not understood, a field
/// both files set), each with its file and line.
fn print_preference_notes(dir: &DataDir) {
    use raven_actors::context::preferences;
    match preferences::read(&dir.memory(), &preferences::toml_path(dir)) {
        Ok(p) if p.notes.is_empty() => {}
        Ok(p) => {
            println!("# preferences: {} note(s)", p.notes.len());
            for note in p.notes {
                println!("#   {note}");
            }
        }
        Err(e) => println!("# preferences: not read: {e}"),
    }
}
