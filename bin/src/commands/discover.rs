//! `raven discover [REASON]`: ask for a task-discovery run now. It writes a trigger to
//! `sentinel/triggers.json` (file IPC, no supervisor needed): the engine that drains it
//! first (every `sentinel.trigger_poll_s`, 5 s) runs discovery once. With a supervisor
//! running, it then prints what the run did, as its journal line says (`--wait 0`: do not
//! wait).

use super::outcome::Waiter;
use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_actors::sentinel::triggers::TriggerStore;
use std::time::Duration;

pub fn run(dir: &DataDir, reason: String, wait_s: u64) -> Result<(), CliError> {
    dir.ensure().map_err(CliError::data_dir(dir.root()))?;
    let tz = super::load_config(dir)?.general.timezone;
    let waiter = Waiter::before_request(dir, "discovery");
    TriggerStore::in_dir(dir)?.request(&reason, chrono::Utc::now())?;
    let running = actix_rt::System::new().block_on(super::connect_supervisor(dir)).is_ok();
    if !running || wait_s == 0 {
        println!("discovery requested; a running engine picks it up within sentinel.trigger_poll_s");
        return Ok(());
    }
    println!("discovery requested");
    waiter.print_outcome(Duration::from_secs(wait_s), tz, "discovery")
}
