//! Real servers a channel test talks to, started by the project's own scripts
//! (`scripts/smtp.sh`, `scripts/synapse.sh`), which install them from PyPI into a venv under
//! `target/py` the first time. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

pub struct Server {
    script: &'static str,
    pub workdir: PathBuf,
    /// What the script printed: `127.0.0.1:<port>` or `http://127.0.0.1:<port>`.
    pub address: String,
    /// One server of a kind at a time: two Python homeservers starting at once on 2 cores,
    /// beside the other tests, answered a first request after more than 30 s.
    _one_at_a_time: MutexGuard<'static, ()>,
}

static SYNAPSE: Mutex<()> = Mutex::new(());
static SMTP: Mutex<()> = Mutex::new(());

/// True when `RAVEN_SKIP_SERVERS` is set (to anything but `0` or empty): the caller, a test
/// that needs a real server, returns at once, and this says so on stderr. CI never sets it.
pub fn skipped(test: &str) -> bool {
    let skip = std::env::var("RAVEN_SKIP_SERVERS").is_ok_and(|v| !v.is_empty() && v != "0");
    if skip {
        eprintln!("{test}: skipped (RAVEN_SKIP_SERVERS is set; it needs a real server)");
    }
    skip
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts").join(name)
}

impl Server {
    /// `scripts/<script> start <workdir>`, once no other test runs a server of the kind; panics
    /// with the script's words when it fails.
    pub fn start(script_name: &'static str, workdir: &Path) -> Server {
        let gate = if script_name.contains("synapse") { &SYNAPSE } else { &SMTP };
        let turn = gate.lock().unwrap_or_else(|held| held.into_inner());
        let address = launch(script_name, workdir);
        Server { script: script_name, workdir: workdir.to_owned(), address, _one_at_a_time: turn }
    }

    pub fn stop(&self) {
        let _ = Command::new(script(self.script)).arg("stop").arg(&self.workdir).output();
    }

    /// Stopped and started again on the same port and data.
    pub fn restart(&self) {
        self.stop();
        let again = launch(self.script, &self.workdir);
        assert_eq!(again, self.address, "the same address after a restart");
    }
}

/// Runs `scripts/<script> start <workdir>`: the address it printed.
fn launch(script_name: &str, workdir: &Path) -> String {
    std::fs::create_dir_all(workdir).unwrap();
    let out = Command::new(script(script_name)).arg("start").arg(workdir).output().expect("run the script");
    assert!(
        out.status.success(),
        "{script_name} start failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().lines().last().unwrap_or_default().to_owned()
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
