//! A command that only reads never moves or writes a state file: with a corrupt policy ledger
//! and a corrupt outbox, `raven policy explain` says so and shows what it can, and `status`,
//! `outbox`, `log`, `why`, `cron list` and `channels` leave both files as they are, with no
//! copy kept aside (that is a writer's job, the supervisor's).

use crate::support;

use std::path::Path;

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let read = |p: std::path::PathBuf| (p.display().to_string(), std::fs::read(&p).unwrap_or_default());
    support::files_under(dir).into_iter().map(read).collect()
}

#[test]
fn read_only_commands_leave_a_corrupt_state_file_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, "[delivery]\njsonl_path = \"out.jsonl\"\n");
    let state = dir.join("sentinel/state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("policy.json"), b"{\"policy\": {\"fires\": [tru").unwrap();
    std::fs::write(state.join("outbox.json"), b"not json at all").unwrap();
    let before = files(&state);

    let explained = support::raven(dir, &["policy", "explain", "--content", "Drink water"]);
    let said = String::from_utf8_lossy(&explained.stdout).into_owned() + &String::from_utf8_lossy(&explained.stderr);
    assert!(explained.status.success(), "{said}");
    assert!(said.contains("corrupt"), "the corruption is reported: {said}");
    assert_eq!(files(&state), before, "policy explain moved or wrote a state file");

    let commands: [&[&str]; 7] =
        [&["status"], &["outbox"], &["outbox", "--dead"], &["log"], &["why", "x"], &["cron", "list"], &["channels"]];
    for args in commands {
        let out = support::raven(dir, args);
        assert_eq!(files(&state), before, "`raven {}` moved or wrote a state file: {}", args.join(" "), {
            String::from_utf8_lossy(&out.stderr)
        });
    }
}
