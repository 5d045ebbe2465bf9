//! The state files as another process finds them: a corrupt state.json is kept aside,
//! never overwritten, and the message names the file.

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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&state.display().to_string()), "{stderr}");
    assert!(stderr.contains("corrupt"), "{stderr}");

    let kept: Vec<_> = std::fs::read_dir(&sentinel)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), garbage, "kept byte for byte");
    assert!(stderr.contains(&kept[0].display().to_string()), "the message names the copy: {stderr}");
    // The gate ran on empty state.
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("verdict: allow"));
}
