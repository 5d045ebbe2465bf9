//! `raven service install`: a unit that keeps `raven up` running for this user (a systemd user
//! unit on Linux, a launchd agent on macOS), written for this binary and this data dir, and the
//! commands that turn it on. Secrets (bot tokens, an LLM key) go in `raven.env` in the data dir,
//! which the unit reads (owner-only).

use crate::error::CliError;
use clap::Subcommand;
use raven_actors::data_dir::DataDir;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum ServiceCommand {
    /// Write the unit that runs `raven up` for this user, and say how to turn it on.
    Install,
}

pub fn run(c: ServiceCommand, dir: &DataDir) -> Result<(), CliError> {
    match c {
        ServiceCommand::Install => install(dir),
    }
}

fn install(dir: &DataDir) -> Result<(), CliError> {
    dir.ensure().map_err(CliError::data_dir(dir.root()))?;
    let exe = std::env::current_exe().map_err(CliError::data_dir(dir.root()))?;
    let root = std::fs::canonicalize(dir.root()).unwrap_or_else(|_| dir.root().to_owned());
    let env = root.join("raven.env");
    let unit = Unit::for_this_system(&exe, &root, &env)?;
    if let Some(parent) = unit.path.parent() {
        std::fs::create_dir_all(parent).map_err(CliError::data_dir(parent))?;
    }
    std::fs::write(&unit.path, &unit.text).map_err(CliError::data_dir(&unit.path))?;
    println!("wrote {}", unit.path.display());
    println!("Put secrets (RAVEN_TELEGRAM_TOKEN=…, an LLM key) in {}, readable by you only.", env.display());
    println!("Turn it on:\n{}", unit.enable);
    Ok(())
}

/// A unit file, where it goes, and the commands that enable it.
struct Unit {
    path: PathBuf,
    text: String,
    enable: String,
}

impl Unit {
    #[cfg(not(target_os = "macos"))]
    fn for_this_system(exe: &Path, root: &Path, env: &Path) -> Result<Unit, CliError> {
        let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(c) => PathBuf::from(c),
            None => home()?.join(".config"),
        };
        Ok(Unit {
            path: config.join("systemd/user/raven.service"),
            text: systemd(exe, root, env),
            enable: "  systemctl --user daemon-reload\n  systemctl --user enable --now raven\n  \
                     loginctl enable-linger \"$USER\"   # keeps it running after you log out\n  \
                     journalctl --user -u raven -f      # its log"
                .into(),
        })
    }

    #[cfg(target_os = "macos")]
    fn for_this_system(exe: &Path, root: &Path, env: &Path) -> Result<Unit, CliError> {
        let path = home()?.join("Library/LaunchAgents/dev.raven.up.plist");
        let enable = format!("  launchctl load -w {}", path.display());
        Ok(Unit { path, text: launchd(exe, root, env), enable })
    }
}

fn home() -> Result<PathBuf, CliError> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| CliError::refused("HOME is not set: cannot tell where the unit goes"))
}

/// The systemd user unit.
#[cfg_attr(target_os = "macos", allow(dead_code))]
fn systemd(exe: &Path, root: &Path, env: &Path) -> String {
    format!(
        "[Unit]\nDescription=Raven, a proactive assistant\nAfter=network-online.target\n\n\
         [Service]\nExecStart=\"{}\" --data-dir \"{}\" up\nEnvironmentFile=-{}\nRestart=on-failure\nRestartSec=5\n\n\
         [Install]\nWantedBy=default.target\n",
        exe.display(),
        root.display(),
        env.display()
    )
}

/// The launchd agent (launchd reads no env file: the wrapper shell does).
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn launchd(exe: &Path, root: &Path, env: &Path) -> String {
    let command = format!(
        "[ -f '{env}' ] && . '{env}'; exec '{exe}' --data-dir '{root}' up",
        env = env.display(),
        exe = exe.display(),
        root = root.display()
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict>\n\
         <key>Label</key><string>dev.raven.up</string>\n\
         <key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string><string>{}</string></array>\n\
         <key>RunAtLoad</key><true/><key>KeepAlive</key><true/>\n</dict></plist>\n",
        command.replace('&', "&amp;").replace('<', "&lt;")
    )
}
