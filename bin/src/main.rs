//! `raven`: one binary, one subcommand per job.

mod commands;
mod error;
mod output;

use clap::{CommandFactory, Parser, Subcommand};
use error::CliError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "raven", version, about = "A proactive engine for a personal LLM agent")]
struct Cli {
    /// The data dir (default: $RAVEN_HOME, else $XDG_DATA_HOME/raven, else ~/.local/share/raven).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a starter data dir: config.toml with the Sentinel on and the usual choices
    /// commented, MEMORY.md and HEARTBEAT.md examples (a file that exists is kept).
    Init,
    /// Keep `raven up` running for this user: `install` writes a systemd user unit (a launchd
    /// agent on macOS) and says how to turn it on.
    #[command(subcommand)]
    Service(commands::service::ServiceCommand),
    /// Inspect the configuration.
    #[command(subcommand)]
    Config(commands::config::ConfigCommand),
    /// Ask the NudgePolicy gate.
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// What the engine reads in the user's notes (workspace/MEMORY.md).
    #[command(subcommand)]
    Memory(commands::memory::MemoryCommand),
    /// Say how a proactive message landed, by the id shown beside it: accepted, dismissed or
    /// neutral; or put it off (later: it comes again after `feedback.later_minutes`). Or mute a topic (`--stop`), unmute it (`--ok`), or hold every proactive
    /// message but cron for a while (`--snooze`).
    Feedback(commands::feedback::FeedbackArgs),
    /// The chat channels (Telegram, Matrix, ntfy, email): their health; `test <name>` sends a
    /// test message.
    Channels {
        #[command(subcommand)]
        command: Option<commands::channels::ChannelsCommand>,
    },
    /// What waits in the outbox for an outlet (`--dead`: the dead letters); `drop` takes them.
    Outbox(commands::outbox::OutboxArgs),
    /// The engine's state database: `export` prints what it holds, `check` checks its integrity.
    #[command(subcommand)]
    State(commands::state::StateCommand),
    /// The user's scheduled jobs (cron/jobs.json).
    #[command(subcommand)]
    Cron(commands::cron::CronCommand),
    /// Run the supervisor: the engine and its control socket, until SIGINT/SIGTERM.
    Up,
    /// The interactive cli channel: attaches to a running supervisor, else runs an engine here.
    Repl,
    /// Run the HTTP gateway (`raven up` starts and restarts it).
    Gateway,
    /// Show the running supervisor's actors and their mailbox metrics.
    Status {
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Print the running supervisor's actor metrics (Prometheus text format).
    Metrics,
    /// Say something to the agent: one user turn, on the running supervisor, else on an engine
    /// embedded in this process.
    Say {
        /// The message (`/remind in 10m <text>` works without an LLM).
        text: String,
        /// The conversation, `channel:chat_id`.
        #[arg(long, default_value = "cli:local")]
        session: String,
        /// Pretend it is this time (a manual clock): `2026-03-02 12:00` in your zone, `tomorrow
        /// at 9`, or RFC 3339. A dry run: an embedded engine on a private copy of the data
        /// dir; nothing is saved.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
    },
    /// Send one message out through the DeliveryHub (the supervisor's when running).
    Send {
        /// Where to: `channel:chat_id`.
        target: String,
        text: String,
    },
    /// Wake the running supervisor's heartbeat now (it reviews HEARTBEAT.md early).
    Wake {
        /// Why, for the log.
        #[arg(default_value = "manual")]
        reason: String,
        /// Seconds to wait for the heartbeat's outcome (0: do not wait).
        #[arg(long, value_name = "SECS", default_value_t = 90)]
        wait: u64,
    },
    /// Ask for a task-discovery run now (a trigger any running engine drains).
    Discover {
        /// Why, for the log.
        #[arg(default_value = "operator")]
        reason: String,
        /// Seconds to wait for the run's outcome when a supervisor runs (0: do not wait).
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        wait: u64,
    },
    /// Run one Sentinel tick now: the running supervisor's, else on an engine embedded in this
    /// process.
    Tick {
        /// Tick at this time instead of now (a manual clock): `2026-03-02 12:00` in your zone,
        /// `tomorrow at 9`, or RFC 3339. A dry run: an embedded engine on a private copy of the
        /// data dir; nothing is saved.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// Print the actor metrics table afterwards.
        #[arg(long)]
        metrics: bool,
    },
    /// The decision journal: every tick, gate verdict, delivery, outbox move, cron fire and
    /// feedback verdict, in your zone (`--json`: as written).
    Log(commands::log::LogArgs),
    /// Print a completion script for your shell (`raven completions bash > ~/.local/share/
    /// bash-completion/completions/raven`).
    Completions { shell: clap_complete::Shell },
    /// The story of one item from the decision journal: a message (its id or the short id
    /// shown beside it), a topic or a cron job id.
    Why {
        /// A message id, a short id (`3fa2c1`), a topic or a cron job id.
        item: String,
    },
    /// Run the whole engine on a manual clock against a scenario file and write a report, in a
    /// data dir of its own (never a real one: --data-dir is refused, RAVEN_HOME ignored).
    Simulate(commands::simulate::SimulateArgs),
}

fn main() -> ExitCode {
    output::init_logging();
    output::exit_quietly_on_broken_pipe();
    let cli = Cli::parse();
    // A simulation runs in a data dir of its own: it resolves none, and refuses one named.
    if let Command::Simulate(args) = cli.command {
        return exit(commands::simulate::run(cli.data_dir.as_deref(), args));
    }
    if let Command::Completions { shell } = &cli.command {
        return exit(completions(*shell));
    }
    let dir = raven_actors::data_dir::DataDir::resolve(cli.data_dir).map_err(CliError::from);
    let result = dir.and_then(|dir| match cli.command {
        Command::Init => commands::init::run(&dir),
        Command::Service(c) => commands::service::run(c, &dir),
        Command::Config(c) => commands::config::run(c, &dir),
        Command::Policy(c) => commands::policy::run(c, &dir),
        Command::Cron(c) => commands::cron::run(c, &dir),
        Command::Feedback(a) => commands::feedback::run(a, &dir),
        Command::Outbox(a) => commands::outbox::run(a, &dir),
        Command::State(c) => commands::state::run(c, &dir),
        Command::Channels { command } => commands::channels::run(command, &dir),
        Command::Log(a) => commands::log::run(a, &dir),
        Command::Why { item } => commands::why::run(item, &dir),
        Command::Memory(c) => commands::memory::run(c, &dir),
        Command::Up => commands::up::run(&dir),
        Command::Status { json } => commands::status::run(&dir, json),
        Command::Gateway => commands::gateway::run(&dir),
        Command::Repl => commands::repl::run(&dir),
        Command::Metrics => commands::metrics::run(&dir),
        Command::Tick { at, metrics } => commands::tick::run(&dir, at, metrics),
        Command::Say { text, session, at } => commands::say::run(&dir, text, session, at),
        Command::Send { target, text } => commands::send::run(&dir, target, text),
        Command::Wake { reason, wait } => commands::wake::run(&dir, reason, wait),
        Command::Discover { reason, wait } => commands::discover::run(&dir, reason, wait),
        Command::Simulate(_) | Command::Completions { .. } => unreachable!("handled above"),
    });
    exit(result)
}

/// The completion script for `shell`, on stdout (a reader that goes away early is no error).
fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "raven", &mut script);
    match std::io::Write::write_all(&mut std::io::stdout(), &script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Output { what: "completions", source: e })
        }
        _ => Ok(()),
    }
}

/// Every error on stderr as `raven: <message>`, and its kind's exit code. The message may
/// carry a remote service's text or what the user typed: its escape sequences are taken out.
fn exit(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("raven: {}", raven_actors::text::sanitize(&error.to_string()));
            ExitCode::from(error.exit_code())
        }
    }
}
