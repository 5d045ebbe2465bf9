//! The state files as another process finds them: a corrupt state.json is reported by a
//! command that only reads and left where it is; a writer keeps it aside, never overwrites it,
//! and the message names the file.

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
