//! Cron (spec §10): the user's scheduled jobs: the schedules, the jobs.json store and its
//! claims, the jobs' run state in the state database, the timer actor, the fire path into the spine, pausing and resuming (strike decay,
//! a reply on a job's conversation), and the agent's cron tool.

pub mod claims;
pub(crate) mod fire;
pub mod ids;
pub mod later;
pub mod pause;
pub(crate) mod reply;
mod run_state;
pub(crate) mod schedule;
pub mod service;
pub mod store;
pub mod tool;
pub mod words;
