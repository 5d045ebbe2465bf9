//! The state as another process finds it: a corrupt state.json is reported by a command that
//! only reads and left where it is; a writer keeps it aside, never overwrites it, and the
//! message names the file. The state files of an earlier version are imported into the state
//! database once, and kept.

use crate::support;

#[test]
fn a_corrupt_state_file_is_kept_aside_and_named() {
    let dir = tempfile::tempdir().unwrap();
    // The gate's answer on empty state is what is checked, whatever the hour.
    support::write_config(dir.path(), "");
    let sentinel = dir.path().join("sentinel");
    std::fs::create_dir_all(&sentinel).unwrap();
    let state = sentinel.join("state.json");
    let garbage = b"{\"policy\": {\"fires\": [ this is not json";
    std::fs::write(&state, garbage).unwrap();

    let out =
        support::raven(dir.path(), &["policy", "explain", "--content", "Drink water", "--at", "2026-03-02T12:00:00Z"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&state.display().to_string()) && said.contains("corrupt"), "{said}");
    // The gate ran on empty state, and the file is as it was: reading moves nothing.
    assert!(said.starts_with("verdict: allow"), "{said}");
    let copies = || -> Vec<_> {
        std::fs::read_dir(&sentinel)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("state.json.corrupt-"))
            .collect()
    };
    assert!(copies().is_empty(), "{:?}", copies());
    assert_eq!(std::fs::read(&state).unwrap(), garbage);

    // A writer (here dropping the dead letters) keeps it aside and says where.
    let out = support::raven(dir.path(), &["outbox", "drop", "--dead"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&state.display().to_string()) && stderr.contains("corrupt"), "{stderr}");
    let kept = copies();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), garbage, "kept byte for byte");
    assert!(stderr.contains(&kept[0].display().to_string()), "the message names the copy: {stderr}");
}

/// The gate's ledger an earlier version kept (`sentinel/state/policy.json`), as it wrote it.
const LEDGER: &str = r#"{
  "policy": {
    "fires": [
      {"at": "2026-03-02T10:00:00Z", "kind": "nudge", "action": "nudge", "session": null,
       "topic": "water", "content_hash": 11, "priority": "low"},
      {"at": "2026-03-02T11:00:00Z", "kind": "nudge", "action": "nudge", "session": "cli:local",
       "topic": "stretch", "content_hash": 12, "priority": "low"}
    ],
    "multiplier": 0.5
  }
}"#;

/// A data dir an earlier version wrote, one JSON file per owner: a command that only reads
/// uses the files and leaves them; the first writer imports each into the state database and
/// keeps it as `<file>.migrated`, byte for byte; every view then reads the database.
#[test]
fn an_earlier_versions_state_files_are_imported_once_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, "[delivery]\njsonl_path = \"out.jsonl\"\n");
    let (sentinel, state) = (dir.join("sentinel"), dir.join("sentinel/state"));
    std::fs::create_dir_all(&state).unwrap();
    let files = [
        (state.join("policy.json"), LEDGER.to_owned()),
        (state.join("defer.json"), r#"{"defer": {"entries": []}}"#.to_owned()),
        (state.join("discovery.json"), r#"{"discovery_last_day": "2026-03-01"}"#.to_owned()),
        (sentinel.join("triggers.json"), r#"{"discovery_triggers": []}"#.to_owned()),
    ];
    for (path, text) in &files {
        std::fs::write(path, text).unwrap();
    }
    let explain = || {
        let args = ["policy", "explain", "--content", "Drink water", "--at", "2026-03-02T12:00:00Z"];
        let out = support::raven(dir, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = explain();
    assert!(said.contains("policy.json (2 fires on record)"), "read from the old file: {said}");
    assert!(!dir.join("state.db").exists(), "a read makes nothing");

    let tick = support::raven(dir, &["tick"]);
    assert!(tick.status.success(), "{}", String::from_utf8_lossy(&tick.stderr));
    assert!(!dir.join("state.db-wal").exists(), "the tick closed the database: its log is folded in and gone");
    for (path, text) in &files {
        let mut kept = path.as_os_str().to_owned();
        kept.push(".migrated");
        assert!(!path.exists(), "{} imported", path.display());
        assert_eq!(&std::fs::read_to_string(&kept).unwrap(), text, "{} kept as it was", path.display());
    }
    let said = explain();
    assert!(said.contains("state.db (2 fires on record)"), "read from the database: {said}");
    let out = support::raven(dir, &["state", "export", "--json"]);
    let export: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ledger = &export["sections"]["policy"]["policy"];
    assert_eq!(ledger["fires"].as_array().map(Vec::len), Some(2), "{export}");
    assert_eq!(export["sections"]["discovery"]["discovery_last_day"], "2026-03-01", "{export}");
    let human = String::from_utf8_lossy(&support::raven(dir, &["state", "export"]).stdout).into_owned();
    assert!(human.lines().any(|l| l.contains("policy") && l.contains("fires: 2 items")), "{human}");
    // A second writer finds nothing left to import.
    assert!(support::raven(dir, &["tick"]).status.success());
    assert!(explain().contains("state.db (2 fires on record)"));
}
