//! Real servers a channel test talks to, started by the project's own scripts
//! (`scripts/smtp.sh`, `scripts/synapse.sh`), which install them from PyPI into a venv under
//! `target/py` the first time. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    script: &'static str,
    pub workdir: PathBuf,
    /// What the script printed: `127.0.0.1:<port>` or `http://127.0.0.1:<port>`.
    pub address: String,
}

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
    /// `scripts/<script> start <workdir>`; panics with the script's words when it fails.
    pub fn start(script_name: &'static str, workdir: &Path) -> Server {
        std::fs::create_dir_all(workdir).unwrap();
        let out = Command::new(script(script_name)).arg("start").arg(workdir).output().expect("run the script");
        assert!(
            out.status.success(),
            "{script_name} start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let address = String::from_utf8_lossy(&out.stdout).trim().lines().last().unwrap_or_default().to_owned();
        Server { script: script_name, workdir: workdir.to_owned(), address }
    }

    pub fn stop(&self) {
        let _ = Command::new(script(self.script)).arg("stop").arg(&self.workdir).output();
    }

    /// Stopped and started again on the same port and data.
    pub fn restart(&self) {
        self.stop();
        let again = Server::start(self.script, &self.workdir);
        assert_eq!(again.address, self.address, "the same address after a restart");
        std::mem::forget(again);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
