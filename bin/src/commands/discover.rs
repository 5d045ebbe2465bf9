//! `raven discover [REASON]`: ask for a task-discovery run now. It only writes a trigger to
//! `sentinel/triggers.json` (file IPC, no supervisor needed): the engine that drains it
//! first (every `sentinel.trigger_poll_s`, 5 s) runs discovery once.

use raven_actors::data_dir::DataDir;
use raven_actors::sentinel::triggers::TriggerStore;

pub fn run(dir: &DataDir, reason: String) -> Result<(), String> {
    dir.ensure().map_err(|e| format!("data dir {}: {e}", dir.root().display()))?;
    TriggerStore::new(dir.triggers()).request(&reason, chrono::Utc::now()).map_err(|e| e.to_string())?;
    println!("discovery requested; a running engine picks it up within sentinel.trigger_poll_s");
    Ok(())
}
