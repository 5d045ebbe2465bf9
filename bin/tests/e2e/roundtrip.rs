//! What the engine does not understand is kept, through the real binary: a job's unknown
//! fields survive a write-back of jobs.json, and those of its run state the move of that
//! state into the state database; a feedback record's unknown field survives the
//! daily trim byte for byte; a garbage line and a line with a byte that is not UTF-8 end up in
//! `feedback.jsonl.rejected`, not lost; and the bad byte leaves the rest of the log readable,
//! so what was learned (a mute) still holds.

use crate::support;

use chrono::{Duration, SecondsFormat, Utc};
use support::raven;

fn stdout(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_job_s_unknown_fields_survive_a_write_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("cron")).unwrap();
    let jobs = r#"{"jobs": [{"id": "w", "message": "water the plants", "target": "cli:local", "note": "mine",
        "created_at": "2026-12-01T08:00:00Z", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"},
        "state": {"runs": 3, "streak": {"days": 4}}}]}"#;
    std::fs::write(dir.join("cron/jobs.json"), jobs).unwrap();
    stdout(&raven(dir, &["cron", "add", "--in", "1h", "tea"]));
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cron/jobs.json")).unwrap()).unwrap();
    assert_eq!(written["jobs"].as_array().unwrap().len(), 2, "{written}");
    assert_eq!(written["jobs"][0]["note"], "mine", "{written}");
    // The run state an earlier version kept in jobs.json now lives in the state database,
    // its unknown fields with it.
    assert!(written["jobs"][0].get("state").is_none(), "{written}");
    let listed: serde_json::Value = serde_json::from_str(&stdout(&raven(dir, &["cron", "list", "--json"]))).unwrap();
    let water = listed.as_array().unwrap().iter().find(|j| j["id"] == "w").unwrap().clone();
    assert_eq!(water["state"]["streak"]["days"], 4, "{listed}");
    assert_eq!(water["state"]["runs"], 3, "{listed}");
}

#[test]
fn the_trim_keeps_unknown_fields_moves_bad_lines_aside_and_a_bad_byte_spoils_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("sentinel")).unwrap();
    let at = |d: Duration| (Utc::now() + d).to_rfc3339_opts(SecondsFormat::Secs, true);
    let old = format!(r#"{{"at":"{}","nudge_id":"n0","event":"dispatched","topic":"old"}}"#, at(-Duration::days(40)));
    let extra = format!(
        r#"{{"at":"{}","nudge_id":"n1","event":"dispatched","topic":"tea","visible":true,"mine":"keep me"}}"#,
        at(-Duration::hours(1))
    );
    let garbage = "not json at all".to_owned();
    let mut bad_byte = format!(r#"{{"at":"{}","nudge_id":"x"#, at(-Duration::minutes(50))).into_bytes();
    bad_byte.push(0xff);
    bad_byte.extend_from_slice(br#"","event":"accepted"}"#);
    let mute = format!(
        r#"{{"at":"{}","nudge_id":"muted:water","event":"muted","topic":"water","until":"{}"}}"#,
        at(-Duration::minutes(40)),
        at(Duration::days(7))
    );
    let mut log = Vec::new();
    for line in [old.as_bytes(), extra.as_bytes(), garbage.as_bytes(), &bad_byte, mute.as_bytes()] {
        log.extend_from_slice(line);
        log.push(b'\n');
    }
    std::fs::write(dir.join("sentinel/feedback.jsonl"), &log).unwrap();

    // The bad byte spoils its own line only: the mute is still learned.
    let explain = ["policy", "explain", "--content", "water the plants", "--topic", "water"];
    assert!(stdout(&raven(dir, &explain)).contains("DENY  topic `water` muted by the user"));

    // The daily trim (on the tick): the old record goes, the bad lines move aside, the rest
    // stays as it was written.
    stdout(&raven(dir, &["tick"]));
    let kept = std::fs::read(dir.join("sentinel/feedback.jsonl")).unwrap();
    assert_eq!(kept, format!("{extra}\n{mute}\n").into_bytes());
    let rejected = std::fs::read(dir.join("sentinel/feedback.jsonl.rejected")).unwrap();
    let mut expected = format!("{garbage}\n").into_bytes();
    expected.extend_from_slice(&bad_byte);
    expected.push(b'\n');
    assert_eq!(rejected, expected);
    assert!(stdout(&raven(dir, &explain)).contains("DENY  topic `water` muted by the user"));
}
