//! Shared helpers of the end-to-end tests: the real `raven` binary, run as a process.
//!
//! # The clock decides nothing a test does not say
//!
//! These tests run the binary on the real clock, so whatever the clock could decide is pinned
//! in the config the test writes ([`write_config`], which [`up`] uses): no quiet hours and a
//! weekend factor of 1, unless the test's own config sets them because they are what it
//! tests. A test that needs a moment (a due time, a day) computes it from the current local
//! time in [`zone`], the zone its `raven` processes run in.
//!
//! # Running a test at a given date and time
//!
//! `scripts/at.sh` runs any command as if the clock read a given local time in a given zone,
//! through libfaketime (it installs the Debian package `faketime` when missing). Every process
//! the command starts shares one shifted clock; monotonic time is left alone, so timeouts and
//! timers behave as usual:
//!
//! ```text
//! scripts/at.sh '2026-12-12 03:30' Asia/Tokyo cargo test -p raven-bin --test e2e feedback::
//! scripts/at.sh '2026-12-09 23:30' America/New_York cargo test --workspace
//! ```
//!
//! The zone becomes `TZ` of the test binaries and [`zone`] of the `raven` they start.
//! `.ci/run` runs the end-to-end tests a second time this way, at a weekend night.

#[allow(dead_code)]
pub mod fake_http;
#[allow(dead_code)]
pub mod model;
#[allow(dead_code)]
pub mod servers;
#[allow(dead_code)]
pub mod tmux;
pub mod week;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `raven` binary cargo built for this test run.
pub fn raven_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_raven"))
}

/// The zone the `raven` processes of these tests run in: `RAVEN_TEST_TZ` when set (the
/// clock-shifted runs of `scripts/at.sh` set it), else UTC.
#[allow(dead_code)]
pub fn zone() -> String {
    std::env::var("RAVEN_TEST_TZ").ok().filter(|z| !z.is_empty()).unwrap_or_else(|| "UTC".to_owned())
}

/// Now, in [`zone`]: the wall clock the `raven` processes of these tests read.
#[allow(dead_code)]
pub fn now_local() -> chrono::DateTime<chrono_tz::Tz> {
    let tz: chrono_tz::Tz = zone().parse().expect("RAVEN_TEST_TZ names a zone");
    chrono::Utc::now().with_timezone(&tz)
}

/// `config` with what the real clock must not decide pinned, where the config does not set it
/// itself: quiet hours off (`00:00`–`00:00`), a weekend factor of 1, and neither the daily
/// discovery menu (from 9:00 local on weekdays) nor the morning brief (from the end of quiet
/// hours): a tick's deliveries would depend on the hour the suite runs at. A config that is not valid TOML is returned as it is (a test of
/// the error).
#[allow(dead_code)]
pub fn clock_neutral(config: &str) -> String {
    let Ok(mut table) = config.parse::<toml::Table>() else {
        return config.to_owned();
    };
    let section = |t: &mut toml::Table, name: &str| -> Option<toml::Table> {
        match t.entry(name).or_insert_with(|| toml::Value::Table(toml::Table::new())) {
            toml::Value::Table(s) => Some(std::mem::take(s)),
            _ => None,
        }
    };
    let Some(mut policy) = section(&mut table, "policy") else {
        return config.to_owned();
    };
    if !policy.contains_key("quiet_hours") {
        let mut off = toml::Table::new();
        off.insert("start".into(), "00:00".into());
        off.insert("end".into(), "00:00".into());
        policy.insert("quiet_hours".into(), toml::Value::Table(off));
    }
    if let Some(mut adaptive) = section(&mut policy, "adaptive") {
        adaptive.entry("weekend_factor").or_insert(toml::Value::Float(1.0));
        policy.insert("adaptive".into(), toml::Value::Table(adaptive));
    }
    table.insert("policy".into(), toml::Value::Table(policy));
    for daily in ["discovery", "brief"] {
        if !table.contains_key(daily) {
            let mut off = toml::Table::new();
            off.insert("enabled".into(), false.into());
            table.insert(daily.into(), toml::Value::Table(off));
        }
    }
    toml::to_string(&table).expect("a table serialises")
}

/// Writes `config` as `<dir>/config.toml`, with the clock's say pinned ([`clock_neutral`]).
#[allow(dead_code)]
pub fn write_config(dir: &Path, config: &str) {
    std::fs::write(dir.join("config.toml"), clock_neutral(config)).unwrap();
}

/// Runs `raven --data-dir <dir> <args>` to completion.
#[allow(dead_code)] // each test crate uses its own subset of these helpers
pub fn raven(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("RAVEN_HOME")
        // The tests say their zone: the machine's own must not change what they see.
        .env("TZ", zone())
        // They read the terminal's messages from a pipe: those count as seen.
        .env("RAVEN_CLI_ALWAYS", "1")
        .output()
        .expect("run raven")
}

/// Starts `raven up` on `dir`, writing `config` as its config.toml first (a free gateway port
/// unless the config says otherwise; the clock pinned as [`write_config`] does), with `env` set. stdout is discarded, stderr kept in
/// `<dir>/up.stderr`.
#[allow(dead_code)]
pub fn up(dir: &Path, config: &str, env: &[(&str, &str)]) -> std::process::Child {
    let config = if config.contains("[gateway]") {
        config.to_owned()
    } else {
        format!("[gateway]\nlisten = \"127.0.0.1:0\"\n{config}")
    };
    write_config(dir, &config);
    let mut c = Command::new(raven_bin());
    c.arg("--data-dir").arg(dir).arg("up").env_remove("RAVEN_HOME").env("TZ", zone()).env("RAVEN_CLI_ALWAYS", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    // stderr to a file: a pipe nobody reads would block the process once full.
    let log = std::fs::File::create(dir.join("up.stderr")).unwrap();
    c.stdout(std::process::Stdio::null()).stderr(log).spawn().expect("start raven up")
}

/// Polls `raven status` until it answers (a few ms apart, 20 s at most); its output.
#[allow(dead_code)]
pub fn wait_ready(dir: &Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let out = raven(dir, &["status"]);
        if out.status.success() {
            return String::from_utf8_lossy(&out.stdout).into_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "raven up never became ready: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Polls `check` every few ms for up to 20 s.
#[allow(dead_code)]
pub fn eventually(what: &str, check: impl FnMut() -> bool) {
    eventually_within(what, std::time::Duration::from_secs(20), std::time::Duration::from_millis(5), check)
}

/// Polls `check` every `every` until it holds; fails the test after `limit`.
#[allow(dead_code)]
pub fn eventually_within(
    what: &str,
    limit: std::time::Duration,
    every: std::time::Duration,
    mut check: impl FnMut() -> bool,
) {
    let deadline = std::time::Instant::now() + limit;
    while !check() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(every);
    }
}

/// Stops the process when dropped (SIGTERM, so a supervisor stops its gateway too; SIGKILL
/// after 5 s), so a failing test leaves nothing behind.
#[allow(dead_code)]
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 request; the status code and the body.
#[allow(dead_code)]
pub fn http(addr: &str, method: &str, path: &str, secret: Option<&str>, body: &[u8]) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    let auth = secret.map(|v| format!("x-raven-secret: {v}\r\n")).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n{auth}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    std::io::Write::write_all(&mut s, head.as_bytes()).unwrap();
    // The server may answer (413) and close before taking a large body: that is fine.
    let _ = std::io::Write::write_all(&mut s, body);
    let mut out = Vec::new();
    let _ = std::io::Read::read_to_end(&mut s, &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (code, body)
}

/// Every supervised actor of the design card, as `raven status` names them.
#[allow(dead_code)]
pub const ACTORS: [&str; 9] = [
    "NudgePolicy",
    "Planner",
    "ContextAssembler",
    "SentinelRunner",
    "DeliveryHub",
    "NudgeInjector",
    "DeferManager",
    "Cron",
    "Heartbeat",
];

/// The gateway's `(address, pid)` from `gateway.addr`, once it accepts connections (20 s at
/// most).
#[allow(dead_code)]
pub fn gateway(dir: &Path) -> (String, u32) {
    let read = || -> Option<(String, u32)> {
        let line = std::fs::read_to_string(dir.join("gateway.addr")).ok()?;
        let (addr, pid) = line.trim().split_once(' ')?;
        Some((addr.to_owned(), pid.parse().ok()?))
    };
    eventually("the gateway", || read().is_some_and(|(a, _)| std::net::TcpStream::connect(a).is_ok()));
    read().unwrap()
}

/// Every file under `root` (not the dirs), in path order.
#[allow(dead_code)]
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type().is_ok_and(|t| t.is_dir()) {
                true => stack.push(e.path()),
                false => out.push(e.path()),
            }
        }
    }
    out.sort();
    out
}

/// `key` (`VmRSS:`, `VmHWM:`...) of `/proc/<pid>/status`, in kB.
pub fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().unwrap()
}
