pub mod config;
pub mod gateway;
pub mod metrics;
pub mod policy;
pub mod say;
pub mod status;
pub mod tick;
pub mod up;

use raven_actors::config::RavenConfig;
use raven_actors::data_dir::DataDir;

/// The effective config of a data dir, or a message naming the file and the key.
pub fn load_config(dir: &DataDir) -> Result<RavenConfig, String> {
    RavenConfig::load(&dir.config()).map(|(c, _)| c).map_err(|e| e.to_string())
}

/// A line on stderr for the operator. Unlike `eprintln!` it never panics: a long-running
/// process must outlive the terminal (or test) that started it.
pub fn note(line: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
