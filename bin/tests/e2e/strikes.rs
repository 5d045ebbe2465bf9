//! Resuming a paused job with the real `raven` binary: a job strike decay paused (as a
//! jobs.json written by hand says) is resumed by `raven cron resume` and listed as live again;
//! a job set aside as unschedulable is refused, with its reason and a non-zero exit, and left
//! as it was.

use crate::support;

use std::path::Path;

const JOBS: &str = r#"{"jobs": [
  {"id": "stretch", "message": "Stand up and stretch", "target": "cli:local",
   "schedule": {"kind": "every", "every_s": 600, "anchor": "2026-03-02T08:00:00Z"},
   "created_at": "2026-03-02T08:00:00Z",
   "state": {"next_run_at": "2026-03-02T08:50:00Z", "runs": 5, "strikes": 5,
             "paused": "paused after 5 fires with no reply"}},
  {"id": "broken", "message": "Never", "target": "cli:local",
   "schedule": {"kind": "cron", "expr": "61 * * * *", "tz": "UTC"},
   "created_at": "2026-03-02T08:00:00Z",
   "state": {"paused": "unusable schedule: `61 * * * *`: out of range"}}
]}"#;

fn out(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The `cron list` line of job `id`.
fn listed(dir: &Path, id: &str) -> String {
    let o = support::raven(dir, &["cron", "list"]);
    assert!(o.status.success(), "{}", out(&o));
    out(&o).lines().find(|l| l.starts_with(id)).unwrap_or_default().to_owned()
}

fn with_jobs() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("cron")).unwrap();
    std::fs::write(tmp.path().join("cron/jobs.json"), JOBS).unwrap();
    tmp
}

#[test]
fn a_job_paused_by_strikes_is_resumed_and_listed_live() {
    let tmp = with_jobs();
    let dir = tmp.path();
    let before = listed(dir, "stretch");
    assert!(before.contains("  paused after 5 fires with no reply"), "{before}");
    let o = support::raven(dir, &["cron", "resume", "stretch"]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("resumed stretch"), "{}", out(&o));
    let after = listed(dir, "stretch");
    assert!(after.contains("  next ") && after.contains("strikes 0"), "{after}");
    assert!(!after.contains("paused"), "{after}");
}

#[test]
fn a_job_set_aside_as_unschedulable_is_refused_with_its_reason() {
    let tmp = with_jobs();
    let dir = tmp.path();
    let jobs = std::fs::read(dir.join("cron/jobs.json")).unwrap();
    let o = support::raven(dir, &["cron", "resume", "broken"]);
    assert!(!o.status.success(), "{}", out(&o));
    let said = out(&o);
    assert!(said.contains("broken") && said.contains("unschedulable") && said.contains("61 * * * *"), "{said}");
    assert_eq!(std::fs::read(dir.join("cron/jobs.json")).unwrap(), jobs, "jobs.json left as it was");
    assert!(listed(dir, "broken").contains("paused: unusable schedule"), "{}", listed(dir, "broken"));
}
