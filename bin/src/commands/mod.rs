pub mod config;
pub mod cron;
pub mod discover;
pub mod gateway;
pub mod metrics;
pub mod policy;
pub mod repl;
pub mod say;
pub mod send;
pub mod simulate;
pub mod status;
pub mod tick;
pub mod up;
pub mod wake;

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

/// The running supervisor's control socket, or a message saying how to start one.
pub async fn connect_supervisor(dir: &DataDir) -> Result<raven_actors::ipc::ControlClient, String> {
    let socket = dir.socket();
    raven_actors::ipc::ControlClient::connect(&socket)
        .await
        .map_err(|e| format!("no supervisor answers on {} ({e}); start one with `raven up`", socket.display()))
}
