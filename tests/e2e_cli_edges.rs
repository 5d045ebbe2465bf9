//! The command line's rough edges: output into a pipe that closes early ends quietly (no
//! panic, exit 0); log lines in a file carry no colour codes; an invalid `[gateway] listen` is
//! refused by validation.

mod support;

use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(support::raven_bin())
        .arg("--data-dir")
        .arg(tmp.path())
        .args(["policy", "explain", "--content", "water the plants"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the command writes (as `| head -1` does after its line).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn log_lines_written_to_a_file_carry_no_colour_codes() {
    let tmp = tempfile::tempdir().unwrap();
    // A line of the feedback log that does not parse is reported at warn.
    std::fs::create_dir_all(tmp.path().join("sentinel")).unwrap();
    std::fs::write(tmp.path().join("sentinel/feedback.jsonl"), "not json\n").unwrap();
    let out = Command::new(support::raven_bin())
        .arg("--data-dir")
        .arg(tmp.path())
        .args(["policy", "explain", "--content", "x"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("WARN"), "a warning was logged: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn an_invalid_gateway_address_is_refused_by_validation() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("config.toml"), "[gateway]\nlisten = \"nowhere\"\n").unwrap();
    let out = support::raven(tmp.path(), &["config", "show"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`gateway.listen`"), "{out:?}");
}
