//! How the command meets its terminal: log lines coloured only when stderr is a terminal (a
//! log file gets plain text), and output into a pipe that closes early (`raven status | head
//! -1`) ends the command quietly, as any Unix tool does, rather than with a panic.

use std::io::IsTerminal;

/// The log subscriber: `RAVEN_LOG` (default `warn`) to stderr.
pub fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("RAVEN_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// A reader that went away (a closed pipe on stdout) ends the command with exit 0.
pub fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info)
    }));
}
