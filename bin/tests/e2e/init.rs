//! `raven init` then `raven up` on a fresh data dir: the example deadline is nudged with no
//! further step; a second init keeps every file; `raven service install` writes a unit that
//! runs this binary on this data dir.

use crate::support;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn init_then_up_nudges_the_example_deadline_with_no_further_step() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = support::raven(dir, &["init"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in ["config.toml", "workspace/MEMORY.md", "workspace/HEARTBEAT.md"] {
        assert!(text(&out.stdout).contains(&format!("wrote    {}", dir.join(file).display())), "{}", text(&out.stdout));
    }
    let said = text(&out.stdout);
    assert!(
        said.contains("The example deadline is an hour from now in ") && said.contains("general.timezone"),
        "{said}"
    );
    let again = support::raven(dir, &["init"]);
    assert!(text(&again.stdout).matches("kept ").count() == 3, "{}", text(&again.stdout));
    // The starter config as written; only its quiet hours are opened, so the test holds at any
    // hour of the day (the shifted CI run is at 03:30).
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(config.contains("[sentinel]\n") && config.contains("enabled = true"), "{config}");
    let config = config.replace("start = \"23:00\"", "start = \"00:00\"").replace("end = \"07:00\"", "end = \"00:00\"");
    let _up = support::Killed(support::up(dir, &config, &[]));
    support::eventually("the example deadline's nudge", || {
        let session = std::fs::read_to_string(dir.join("sessions/cli_local.jsonl")).unwrap_or_default();
        session.lines().any(|l| l.contains("\"proactive\":true") && l.contains("Try Raven"))
    });
}

#[test]
fn service_install_writes_a_unit_for_this_binary_and_this_data_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = tmp.path().join("data");
    let out = std::process::Command::new(support::raven_bin())
        .args(["--data-dir", dir.to_str().unwrap(), "service", "install"])
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("RAVEN_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let unit = std::fs::read_to_string(home.join(".config/systemd/user/raven.service")).unwrap();
    let data = std::fs::canonicalize(&dir).unwrap();
    assert!(unit.contains(&format!("--data-dir \"{}\" up", data.display())), "{unit}");
    assert!(unit.contains(&support::raven_bin().display().to_string()), "{unit}");
    assert!(text(&out.stdout).contains("systemctl --user enable --now raven"), "{}", text(&out.stdout));
}
