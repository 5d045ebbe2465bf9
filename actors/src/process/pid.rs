//! The gateway a data dir's `gateway.addr` names, by its pid: whether it is alive and ours,
//! and a SIGTERM for it.

use crate::data_dir::DataDir;
use rustix::process::{kill_process, test_kill_process, Pid, Signal};

/// Stops the live gateway of `dir` (one that is not our child, adopted, is stopped only so).
pub fn terminate_gateway(dir: &DataDir) {
    if let Some(pid) = live_gateway(dir).and_then(as_pid) {
        let _ = kill_process(pid, Signal::TERM);
    }
}

/// The pid in `gateway.addr` when that process is alive and is a gateway of this data dir.
pub(super) fn live_gateway(dir: &DataDir) -> Option<u32> {
    let line = std::fs::read_to_string(dir.gateway_addr()).ok()?;
    let pid: u32 = line.trim().split_once(' ')?.1.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let root = dir.root().as_os_str().as_encoded_bytes();
    let ours = args.iter().any(|a| *a == b"gateway") && args.contains(&root);
    (ours && pid_alive(pid)).then_some(pid)
}

/// The process exists (and is ours to signal): signal 0.
pub(super) fn pid_alive(pid: u32) -> bool {
    as_pid(pid).is_some_and(|pid| test_kill_process(pid).is_ok())
}

/// A pid that names one process (not 0, which would name our process group).
fn as_pid(pid: u32) -> Option<Pid> {
    Pid::from_raw(i32::try_from(pid).ok()?)
}
