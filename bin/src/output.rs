//! How the command meets its terminal: log lines coloured only when stderr is a terminal (a
//! log file gets plain text), and output into a pipe that closes early (`raven status | head
//! -1`) ends the command quietly, as any Unix tool does, rather than with a panic. A log line
//! that cannot be written (a log file on a full disk) is dropped and counted, never a panic
//! in whatever logged it; once writing works again the log says how many were dropped.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// The log subscriber: `RAVEN_LOG` (default `warn`) to stderr, through [`LogWriter`].
pub fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("RAVEN_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(|| LogWriter { dropped: &DROPPED })
        .with_ansi(std::io::stderr().is_terminal())
        // Its own report of a failed write would go to the same stderr, and panic there.
        .log_internal_errors(false)
        .init();
}

/// Log lines dropped since the last one written.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Writes log lines to stderr; one that cannot be written is counted in `dropped`, and
/// reported before the next line that can.
struct LogWriter {
    dropped: &'static AtomicU64,
}

impl Write for LogWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let mut stderr = std::io::stderr().lock();
        if self.said_what_was_dropped(&mut stderr) && stderr.write_all(line).is_ok() {
            return Ok(line.len());
        }
        self.dropped.fetch_add(1, Ordering::Relaxed);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogWriter {
    /// Says how many lines were dropped, if any were; whether the log can be written.
    fn said_what_was_dropped(&self, to: &mut impl Write) -> bool {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped == 0 {
            return true;
        }
        let notice = format!("{dropped} log lines were dropped: the log could not be written (a full disk?)\n");
        if to.write_all(notice.as_bytes()).is_err() {
            return false;
        }
        self.dropped.fetch_sub(dropped, Ordering::Relaxed);
        true
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A log that cannot be written: every write fails.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("File too large"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn what_was_dropped_is_said_once_when_the_log_can_be_written_again() {
        static COUNT: AtomicU64 = AtomicU64::new(3);
        let w = LogWriter { dropped: &COUNT };
        assert!(!w.said_what_was_dropped(&mut Full), "still full");
        assert_eq!(COUNT.load(Ordering::Relaxed), 3, "nothing said, nothing forgotten");
        let mut log = Vec::new();
        assert!(w.said_what_was_dropped(&mut log));
        assert!(w.said_what_was_dropped(&mut log), "nothing more to say");
        assert_eq!(String::from_utf8(log).unwrap().matches("3 log lines were dropped").count(), 1);
    }
}
