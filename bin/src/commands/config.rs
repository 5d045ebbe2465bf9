//! `raven config show`: the effective config, each value with where it came from.

use clap::Subcommand;
use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print every key with its effective value and its origin (default or the file).
    Show,
}

pub fn run(cmd: ConfigCommand, dir: &DataDir) -> Result<(), String> {
    match cmd {
        ConfigCommand::Show => {
            let path = dir.config();
            let (_, provenance) = RavenConfig::load(&path).map_err(|e| e.to_string())?;
            let presence = if path.exists() { "" } else { " (not present: all defaults)" };
            println!("# data dir: {}\n# config:   {}{presence}", dir.root().display(), path.display());
            print!("{}", provenance.render());
            Ok(())
        }
    }
}
