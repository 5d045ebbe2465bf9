//! The one error of the `raven` command: what went wrong, by kind, each kind with its exit code.
//! `main` prints every error on stderr as `raven: <message>` and exits with its kind's code:
//! 2 for all but a gateway that cannot listen, which exits 3 so that its supervisor can tell
//! that apart from a crash.
//!
//! A kind carries the typed error it comes from where there is one; a `String` payload is text
//! for a person (a message made here, or one the engine gives only as text).

use raven_actors::agent::inbound::commands::CommandError;
use raven_actors::channels::taps::TapError;
use raven_actors::channels::ChannelError;
use raven_actors::config::ConfigError;
use raven_actors::cron::ids::IdError;
use raven_actors::cron::pause::ResumeError;
use raven_actors::cron::store::JobsError;
use raven_actors::data_dir::{DryRunError, NotWritable};
use raven_actors::feedback::give::GiveError;
use raven_actors::ipc::single::LockError;
use raven_actors::ipc::IpcError;
use raven_actors::sentinel::NextGateError;
use raven_actors::store::StoreError;
use raven_actors::supervise::ActorError;
use raven_actors::time::TimeError;
use raven_proto::control::ControlResponse;
use std::fmt::Display;
use std::path::PathBuf;

/// The exit code of every error but one.
pub const FAILED: u8 = 2;

/// The exit code of a gateway that cannot listen (the address is taken, say): its supervisor
/// tells the user once and tries again slowly, rather than restarting it every few seconds.
pub use raven_actors::process::CANNOT_LISTEN;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    // What was asked: refused as it stands.
    /// A bad argument, an unknown id, a bad target, a refused outlet, a channel not enabled.
    #[error("{0}")]
    Refused(String),
    /// A time option (`--at`, `--since`) that does not read as a time; `option` names it.
    #[error("{option}: {source}")]
    BadTime {
        option: &'static str,
        #[source]
        source: TimeError,
    },
    /// A duration (`cron add --in`) that does not read as one; the error quotes it.
    #[error(transparent)]
    BadDuration(TimeError),
    /// A job `cron add` could not schedule or keep (a bad time, a refused target, jobs.json
    /// not writable).
    #[error(transparent)]
    CronAdd(#[from] raven_actors::cron::tool::JobError),
    /// A job id that names no job, or more than one.
    #[error(transparent)]
    JobId(#[from] IdError),
    /// A job that cannot be resumed (or jobs.json not read).
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// A verdict that cannot be recorded (an unknown message id, a bad verdict).
    #[error(transparent)]
    Feedback(#[from] GiveError),
    /// A mute, an unmute or a snooze that does not read or cannot be applied.
    #[error(transparent)]
    FeedbackCommand(#[from] CommandError),
    /// `simulate` pointed at a real data dir (`--data-dir`, `RAVEN_HOME`).
    #[error(transparent)]
    Simulate(#[from] crate::commands::simulate::Refused),

    // The data dir.
    /// No data dir named and none to derive (no `RAVEN_HOME`, no `HOME`).
    #[error("{0}")]
    NoDataDir(#[from] raven_actors::data_dir::NoDataDir),
    /// The data dir cannot be made.
    #[error("data dir {}: {source}", path.display())]
    DataDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A dir a turn or a delivery writes to is not writable.
    #[error(transparent)]
    NotWritable(#[from] NotWritable),
    /// The private copy of a dry run (`--at`) cannot be made.
    #[error(transparent)]
    DryRun(#[from] DryRunError),
    /// The supervisor lock is held (`already running`) or cannot be taken.
    #[error(transparent)]
    Lock(#[from] LockError),

    // The config.
    /// config.toml cannot be read, or does not parse or check.
    #[error(transparent)]
    Config(#[from] ConfigError),

    // The supervisor.
    /// No supervisor answers on the control socket.
    #[error("no supervisor answers on {} ({source}); start one with `raven up`", socket.display())]
    NoSupervisor {
        socket: PathBuf,
        #[source]
        source: IpcError,
    },
    /// The control socket failed during a request, or another supervisor holds it.
    #[error(transparent)]
    Socket(#[from] IpcError),
    /// `raven up` cannot make its control socket.
    #[error("cannot open the control socket: {0}")]
    ControlSocket(#[source] IpcError),
    /// The supervisor (or the engine) answered with an error, or did not deliver.
    #[error("{0}")]
    Answered(String),
    /// A message the outlet refused or could not take now (it waits in the outbox); the
    /// delivery says which, and why.
    #[error("{0}")]
    NotDelivered(String),
    /// The supervisor answered with something this request does not expect.
    #[error("unexpected answer: {0:?}")]
    UnexpectedAnswer(Box<ControlResponse>),
    /// The supervisor refused to push its events to the REPL.
    #[error("the supervisor pushes no events: {0:?}")]
    NoEvents(Box<ControlResponse>),

    // The engine in this process.
    /// The engine cannot start, or its outlets cannot be built.
    #[error(transparent)]
    Engine(#[from] raven_actors::engine::StartError),
    /// An actor of the engine did not answer.
    #[error(transparent)]
    Actor(#[from] ActorError),
    /// The turn ended without an outcome.
    #[error("the turn was dropped")]
    TurnDropped,
    /// The turn ran and failed.
    #[error("the turn failed: {0}")]
    TurnFailed(String),
    /// The turn was interrupted.
    #[error("the turn was interrupted")]
    TurnInterrupted,
    /// A simulation that cannot load its scenario, run, or write its report.
    #[error("{0}")]
    Simulation(String),

    // Channels.
    /// A chat channel that cannot be built from config.toml.
    #[error("{name}: {source}")]
    Channel {
        name: String,
        #[source]
        source: ChannelError,
    },
    /// A chat channel's test message that was not sent.
    #[error("{name}: the test message was not sent: {source}")]
    ChannelTest {
        name: String,
        #[source]
        source: ChannelError,
    },

    // Files, state and the terminal.
    /// A file that cannot be read or written, named.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An I/O error of the gateway's own listener or address file.
    #[error(transparent)]
    Io(std::io::Error),
    /// The output of a command (`completions`) that cannot be written.
    #[error("{what}: {source}")]
    Output {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A state file (the outbox, the triggers) that cannot be read or updated.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// cron/jobs.json cannot be read or updated.
    #[error(transparent)]
    Jobs(#[from] JobsError),
    /// The policy ledger or the feedback log cannot be read for the gate.
    #[error(transparent)]
    Gate(#[from] NextGateError),
    /// The gateway's signed links cannot be opened.
    #[error(transparent)]
    Taps(#[from] TapError),
    /// A value that cannot be printed as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The REPL's line editor cannot start.
    #[error(transparent)]
    Terminal(#[from] rustyline::error::ReadlineError),

    // The gateway.
    /// The gateway cannot listen on its address (exit code 3).
    #[error(
        "the gateway cannot listen on {listen}: {source} (another raven's? set `[gateway] listen` in \
         config.toml; port 0 picks a free one)"
    )]
    CannotListen {
        listen: String,
        #[source]
        source: std::io::Error,
    },
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::CannotListen { .. } => CANNOT_LISTEN,
            _ => FAILED,
        }
    }

    /// The data dir `root` cannot be made.
    pub fn data_dir(root: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| CliError::DataDir { path: root.to_owned(), source }
    }

    /// A request refused, from a message (the engine's text or one made here).
    pub fn refused(message: impl Display) -> Self {
        CliError::Refused(message.to_string())
    }

    /// A simulation that could not load, run or write; it says why.
    pub fn simulation(message: impl Display) -> Self {
        CliError::Simulation(message.to_string())
    }

    /// A file named with its error.
    pub fn file(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| CliError::File { path, source }
    }

    /// A time option that does not read as a time.
    pub fn bad_time(option: &'static str) -> impl FnOnce(TimeError) -> Self {
        move |source| CliError::BadTime { option, source }
    }

    /// An answer the request does not expect.
    pub fn unexpected(answer: ControlResponse) -> Self {
        CliError::UnexpectedAnswer(Box::new(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    fn refused_io() -> Error {
        Error::new(ErrorKind::AddrInUse, "Address in use")
    }

    #[test]
    fn every_kind_exits_2_but_a_gateway_that_cannot_listen() {
        let kinds = [
            CliError::refused("no job abcd (see `raven cron list`)"),
            CliError::NoDataDir(raven_actors::data_dir::NoDataDir),
            CliError::DataDir { path: "/x".into(), source: refused_io() },
            CliError::Answered("the turn failed".into()),
            CliError::Engine(raven_actors::engine::StartError::Sessions { path: "/x".into(), source: refused_io() }),
            CliError::file("/x/MEMORY.md")(refused_io()),
            CliError::TurnDropped,
            CliError::Simulate(crate::commands::simulate::Refused::DataDirFlag),
        ];
        for e in &kinds {
            assert_eq!(e.exit_code(), 2, "{e}");
        }
        let listen = CliError::CannotListen { listen: "127.0.0.1:8080".into(), source: refused_io() };
        assert_eq!(listen.exit_code(), 3);
    }

    #[test]
    fn messages_read_as_before() {
        let socket = PathBuf::from("/d/raven.sock");
        let source = IpcError::Io { path: socket.clone(), source: Error::new(ErrorKind::NotFound, "gone") };
        let none = CliError::NoSupervisor { socket, source };
        assert_eq!(
            none.to_string(),
            "no supervisor answers on /d/raven.sock (control socket /d/raven.sock: gone); start one with `raven up`"
        );
        let dir = CliError::DataDir { path: "/d".into(), source: Error::new(ErrorKind::PermissionDenied, "denied") };
        assert_eq!(dir.to_string(), "data dir /d: denied");
        assert_eq!(CliError::file("/d/journal.jsonl")(refused_io()).to_string(), "/d/journal.jsonl: Address in use");
        let listen = CliError::CannotListen { listen: "127.0.0.1:8080".into(), source: refused_io() };
        assert!(listen.to_string().starts_with("the gateway cannot listen on 127.0.0.1:8080: Address in use (another"));
        assert_eq!(CliError::unexpected(ControlResponse::Ack).to_string(), "unexpected answer: Ack");
    }

    #[test]
    fn a_time_option_is_named_and_a_duration_is_quoted() {
        let bad = raven_actors::time::parse_duration("soon").unwrap_err();
        let as_time = CliError::bad_time("--at")(bad.clone()).to_string();
        assert!(as_time.starts_with("--at: ") && as_time.ends_with(&bad.to_string()), "{as_time}");
        assert_eq!(CliError::BadDuration(bad.clone()).to_string(), bad.to_string());
    }

    #[test]
    fn a_kind_keeps_its_source() {
        use std::error::Error as _;
        let e = CliError::DataDir { path: "/d".into(), source: refused_io() };
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("Address in use"));
        let e = CliError::ControlSocket(IpcError::Protocol { path: "/s".into(), message: "bad hello".into() });
        assert_eq!(e.to_string(), "cannot open the control socket: control socket /s: bad hello");
        assert!(e.source().is_some());
    }
}
