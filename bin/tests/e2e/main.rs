//! The end-to-end tests: the real `raven` binary (`CARGO_BIN_EXE_raven`), run as a user runs
//! it, through its socket, files, HTTP and chat channels. One test binary, a module per topic;
//! `support` holds what they share (how to start `raven`, fake remotes, real servers).
//!
//! The tests that start a real Synapse or SMTP server (`matrix`, `email`) run by default, as
//! CI runs them; `RAVEN_SKIP_SERVERS=1` skips them locally (they say so on stderr).

mod support;

mod brief;
mod cli;
mod cli_edges;
mod cron;
mod disk;
mod email;
mod faults;
mod faults_readonly;
mod feedback;
mod gate;
mod gateway;
mod gateway_limits;
mod heartbeat;
mod honesty;
mod idle;
mod init;
mod journal;
mod live_config;
mod llm_breaker;
mod llm_outage;
mod locks;
mod loops;
mod matrix;
mod matrix_phone;
mod metrics;
mod ntfy;
mod ntfy_phone;
mod outbox;
mod personas;
mod remote_escapes;
mod remote_secrets;
mod repl;
mod repl_week;
mod roundtrip;
mod safe_tools;
mod sessions;
mod simulate;
mod socket;
mod state;
mod strikes;
mod telegram;
mod telegram_phone;
mod time;
mod up;
