//! The command line's rough edges: output into a pipe that closes early ends quietly (no
//! panic, exit 0); log lines in a file carry no colour codes; an invalid `[gateway] listen` is
//! refused by validation.

use crate::support;

use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(support::raven_bin())
        .env("RAVEN_CLI_ALWAYS", "1")
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
        .env("RAVEN_CLI_ALWAYS", "1")
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

#[test]
fn a_second_data_dir_on_a_taken_port_says_so_once_and_runs_without_its_gateway() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = format!("[gateway]\nlisten = \"127.0.0.1:{port}\"\n");
    let _first = support::Killed(support::up(a.path(), &config, &[]));
    support::wait_ready(a.path());
    support::gateway(a.path());
    let _second = support::Killed(support::up(b.path(), &config, &[]));
    support::wait_ready(b.path());
    let log = || std::fs::read_to_string(b.path().join("up.stderr")).unwrap_or_default();
    support::eventually("the second supervisor to say it runs without its gateway", || {
        log().contains("running without the gateway")
    });
    assert!(log().contains(&format!("cannot listen on 127.0.0.1:{port}")), "{}", log());
    // No restart loop: the next try is a minute away.
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(log().matches("cannot listen").count(), 1, "{}", log());
    assert!(!log().contains("restarting in"), "{}", log());
}

#[test]
fn a_gateway_that_cannot_listen_exits_3_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    std::fs::write(tmp.path().join("config.toml"), format!("[gateway]\nlisten = \"127.0.0.1:{port}\"\n")).unwrap();
    let out = support::raven(tmp.path(), &["gateway"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("raven: the gateway cannot listen on 127.0.0.1:{port}: ")), "{stderr}");
}

#[test]
fn job_ids_are_short_and_a_unique_prefix_names_a_job() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = support::raven(dir, &["cron", "add", "--in", "1h", "tea"]);
    assert!(out.status.success(), "{out:?}");
    let added = String::from_utf8_lossy(&out.stdout).into_owned();
    let id = added.split_whitespace().next().unwrap().to_owned();
    assert_eq!(id.len(), 6, "{added}");
    let out = support::raven(dir, &["cron", "rm", &id[..4]]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("removed {id}")), "{out:?}");

    // Two jobs that share a prefix, and one with an id of an older release.
    let job = |id: &str| {
        serde_json::json!({"id": id, "message": "m", "target": "cli:local", "created_at": "2026-12-01T08:00:00Z",
            "schedule": {"kind": "every", "every_s": 600, "anchor": "2026-12-01T08:00:00Z"}})
    };
    let file = serde_json::json!({"jobs": [job("k3xq9m"), job("k3xq2b"), job("job-20261201080000-42")]});
    std::fs::write(dir.join("cron/jobs.json"), file.to_string()).unwrap();
    let out = support::raven(dir, &["cron", "rm", "k3xq"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("names more than one job: k3xq9m, k3xq2b"), "{err}");
    let out = support::raven(dir, &["cron", "rm", "k3x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("too short"), "{out:?}");
    for given in ["k3xq9", "job-20261201080000-42"] {
        let out = support::raven(dir, &["cron", "rm", given]);
        assert!(out.status.success(), "{given}: {out:?}");
    }
    let left = String::from_utf8_lossy(&support::raven(dir, &["cron", "list"]).stdout).into_owned();
    assert!(left.contains("k3xq2b") && !left.contains("k3xq9m") && !left.contains("job-2026"), "{left}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [("bash", "_raven()"), ("zsh", "#compdef raven"), ("fish", "complete -c raven")] {
        let out = Command::new(support::raven_bin())
            .env("RAVEN_CLI_ALWAYS", "1")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker) && script.contains("cron"), "{shell}: {script}");
    }
    let out =
        Command::new(support::raven_bin()).env("RAVEN_CLI_ALWAYS", "1").args(["completions", "nosh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn status_cron_list_and_policy_explain_speak_json_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let parsed = |args: &[&str]| -> serde_json::Value {
        let out = support::raven(dir, args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"))
    };
    assert!(support::raven(dir, &["cron", "add", "--in", "1h", "tea"]).status.success());
    let jobs = parsed(&["cron", "list", "--json"]);
    assert_eq!(jobs[0]["message"], "tea", "{jobs}");
    let explain = parsed(&["policy", "explain", "--content", "water", "--at", "23:00", "--json"]);
    assert_eq!(explain["allow"], false, "{explain}");
    assert_eq!(explain["layer"]["name"], "quiet_hours", "{explain}");
    assert_eq!(explain["layers"].as_array().unwrap().len(), 12, "{explain}");
    let _up = support::Killed(support::up(dir, "", &[]));
    support::wait_ready(dir);
    let status = parsed(&["status", "--json"]);
    assert!(status["supervisor"]["pid"].as_u64().is_some(), "{status}");
    assert!(status["actors"].as_array().is_some_and(|a| !a.is_empty()), "{status}");
}

#[test]
fn the_ready_line_says_what_runs_and_what_to_do_next() {
    let tmp = tempfile::tempdir().unwrap();
    let _up = support::Killed(support::up(tmp.path(), "", &[]));
    support::wait_ready(tmp.path());
    let log = || std::fs::read_to_string(tmp.path().join("up.stderr")).unwrap_or_default();
    support::eventually("the ready lines", || log().contains("raven: next: "));
    let log = log();
    assert!(log.contains("the Sentinel tick off ([sentinel] enabled = true turns it on)"), "{log}");
    assert!(log.contains("model: the embedded rules"), "{log}");
    assert!(log.contains("`raven repl` to talk to it"), "{log}");
}

#[test]
fn intervals_print_as_people_say_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (every, text) in [("10m", "stretch"), ("90m", "walk")] {
        let out = support::raven(dir, &["cron", "add", "--every", every, text]);
        assert!(out.status.success(), "{out:?}");
    }
    let list = String::from_utf8_lossy(&support::raven(dir, &["cron", "list"]).stdout).into_owned();
    assert!(list.contains("  every 10m  ") && list.contains("  every 1h 30m  "), "{list}");
    assert!(!list.contains("600s") && !list.contains("5400s"), "{list}");
}

/// A typo in config.toml never hides what is scheduled or decided: the commands that only
/// read say the error and show with the defaults (in the zone the file names); one that acts
/// refuses the file.
#[test]
fn a_config_typo_is_said_and_the_reading_commands_still_show() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = support::raven(dir, &["cron", "add", "--in", "1h", "tea"]);
    assert!(out.status.success(), "{out:?}");
    support::write_config(dir, "[general]\ntimezone = \"Asia/Tokyo\"\n[policy]\nmax_per_dya = 3\n");
    for args in [&["cron", "list"][..], &["log"], &["outbox"], &["memory", "dates"]] {
        let out = support::raven(dir, args);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("max_per_dya") && stderr.contains("raven config show"), "{args:?}: {stderr}");
        if args[0] == "cron" {
            assert!(stdout.contains("tea") && stdout.contains("Asia/Tokyo"), "{stdout}");
        }
    }
    let add = support::raven(dir, &["cron", "add", "--in", "1h", "coffee"]);
    assert_eq!(add.status.code(), Some(2), "a command that acts refuses the file");
}
