//! Shared helpers of the end-to-end tests: the real `raven` binary, run as a process.

use std::path::PathBuf;
use std::process::{Command, Output};

/// `target/<profile>/raven`, built on demand when this test run did not build it.
pub fn raven_bin() -> PathBuf {
    // The test executable lives in target/<profile>/deps/.
    let exe = std::env::current_exe().expect("current exe");
    let profile_dir = exe.parent().and_then(|d| d.parent()).expect("target dir").to_path_buf();
    let bin = profile_dir.join(format!("raven{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "-p", "raven-bin", "--bin", "raven"]);
        if release {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build");
        assert!(status.success(), "building the raven binary failed");
    }
    bin
}

/// Runs `raven --data-dir <dir> <args>` to completion.
pub fn raven(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(raven_bin())
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("RAVEN_HOME")
        .output()
        .expect("run raven")
}
