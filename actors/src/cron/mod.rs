//! Cron (spec §10): the user's scheduled jobs. This holds the jobs store and the agent's
//! cron tool; the timer service that fires the jobs comes with the cron issue.

pub mod claims;
pub mod schedule;
pub mod store;
pub mod tool;
