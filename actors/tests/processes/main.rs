//! The process tests of `raven-actors`: several processes on one data dir (the store's
//! locks, cron claims, the executor's queues, SIGKILL faults), each test re-running this
//! binary as its workers, and the property tests of the engine's parsers and stores.

mod cron_processes;
mod executor_processes;
mod faults_kill;
mod fuzz_props;
mod store_processes;
