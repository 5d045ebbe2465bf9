//! Cron against a real `raven up`: `raven cron add` from another process while the
//! supervisor sleeps until a job an hour away re-arms its timer at once, and the new job
//! fires through the outlet; `raven status` shows the next cron fire; a malformed jobs.json
//! is named, left byte-identical, and the jobs loaded before keep firing.

use crate::support;

use std::path::Path;

// The supervisor delivers to jsonl itself (no gateway to wait for), and a 1 s job is not
// paused by strike decay while the test watches it.
const CONFIG: &str = "[gateway]\nenabled = false\n[delivery]\njsonl_path = \"out.jsonl\"\n\
                      [sentinel]\nenabled = false\n[cron]\nstrike_limit = 1000\n";

fn out(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn add(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["cron", "add"];
    all.extend_from_slice(args);
    let o = support::raven(dir, &all);
    assert!(o.status.success(), "{}", out(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn next_cron(dir: &Path) -> String {
    let status = support::wait_ready(dir);
    status.lines().find(|l| l.starts_with("next cron:")).unwrap_or_default().to_owned()
}

fn delivered(dir: &Path, text: &str) -> usize {
    std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default().lines().filter(|l| l.contains(text)).count()
}

/// `cron list` shows the soonest first, whatever order the jobs were added in; a paused one last.
#[test]
fn cron_list_shows_the_soonest_first_and_the_paused_last() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    add(dir, &["--in", "3h", "third"]);
    add(dir, &["--in", "1h", "first"]);
    let paused = add(dir, &["--every", "30m", "paused one"]);
    add(dir, &["--in", "2h", "second"]);
    let id = paused.split_whitespace().next().unwrap();
    assert!(support::raven(dir, &["cron", "pause", id]).status.success());
    add(dir, &["--in", "4h", "Open tasks:\n- the parcel"]);
    let listing = out(&support::raven(dir, &["cron", "list"]));
    let order: Vec<&str> = listing.lines().skip(1).map(|l| l.rsplit("  ").next().unwrap()).collect();
    assert_eq!(
        order,
        ["first", "second", "third", "Open tasks: / - the parcel", "paused one"],
        "one line a job: {listing}"
    );
}

#[test]
fn a_job_added_from_another_process_re_arms_the_sleeping_timer_and_fires() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The config first: `cron add --to` checks that the channel has an outlet.
    support::write_config(dir, CONFIG);
    add(dir, &["--in", "1h", "--to", "jsonl:me", "Renew the passport"]);
    let _up = support::Killed(support::up(dir, CONFIG, &[]));
    let status = support::wait_ready(dir);
    for actor in ["Cron", "NudgePolicy", "DeliveryHub", "SentinelRunner"] {
        assert!(status.contains(actor), "{actor} missing from:\n{status}");
    }
    let far = next_cron(dir);
    assert!(!far.contains("nothing"), "the hour-away job is armed: {far}");
    let line = add(dir, &["--in", "2s", "--to", "jsonl:me", "Stretch your legs"]);
    assert!(line.contains("Stretch your legs"), "{line}");
    // The watcher re-arms the timer at once: status shows the new, earlier fire (unless this
    // test was so slow to ask that the job already fired).
    let fired = || delivered(dir, "Stretch your legs") == 1;
    support::eventually("the timer to re-arm", || next_cron(dir) != far || fired());
    support::eventually("the 2 s job to fire", fired);
    assert_eq!(delivered(dir, "Renew the passport"), 0, "the far job did not fire");
    // The one-shot is removed when its fire is written back, just after the delivery.
    let list = || out(&support::raven(dir, &["cron", "list"]));
    support::eventually("the fired one-shot to leave the list", || !list().contains("Stretch your legs"));
    assert!(list().contains("Renew the passport"), "{}", list());
}

#[test]
fn a_malformed_jobs_file_is_named_left_alone_and_the_loaded_jobs_keep_firing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, CONFIG);
    add(dir, &["--every", "1s", "--to", "jsonl:me", "Blink"]);
    let _up = support::Killed(support::up(dir, CONFIG, &[]));
    support::wait_ready(dir);
    support::eventually("the first fire", || delivered(dir, "Blink") >= 1);
    let bad = b"{\"jobs\": [\n  {\"id\": \"x\",, }\n]}\n";
    std::fs::write(dir.join("cron/jobs.json"), bad).unwrap();
    let list = support::raven(dir, &["cron", "list"]);
    assert!(!list.status.success());
    let err = out(&list);
    assert!(err.contains("jobs.json") && err.contains("line 2"), "{err}");
    let seen = delivered(dir, "Blink");
    support::eventually("fires from memory", || delivered(dir, "Blink") >= seen + 2);
    assert_eq!(std::fs::read(dir.join("cron/jobs.json")).unwrap(), bad, "nothing wrote over the file");
    let log = std::fs::read_to_string(dir.join("up.stderr")).unwrap();
    assert!(log.contains("is malformed at line 2"), "the supervisor logged it: {log}");
    let status = out(&support::raven(dir, &["status"]));
    assert!(status.contains("cron: ") && status.contains("malformed at line 2"), "status says so: {status}");
}

/// A fire keeps its job's run state in the state database: jobs.json is left byte for byte,
/// and `raven state export` and `raven cron list --json` show the state.
#[test]
fn a_fire_leaves_jobs_json_alone_and_its_run_state_is_exported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "[cron]\nmax_sleep_s = 1\n[delivery]\njsonl_path = \"out.jsonl\"\n";
    support::write_config(dir, config);
    let added = support::raven(dir, &["cron", "add", "--every", "1s", "stretch", "--to", "jsonl:me"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let jobs = std::fs::read(dir.join("cron/jobs.json")).unwrap();
    let up = support::Killed(support::up(dir, config, &[]));
    support::wait_ready(dir);
    let fired = || std::fs::read_to_string(dir.join("out.jsonl")).unwrap_or_default().matches("stretch").count();
    support::eventually("two fires", || fired() >= 2);
    // A fire's run state is written after its delivery: stopped in between, the export would
    // show the run before.
    let runs = || {
        let export = support::raven(dir, &["state", "export", "--json"]);
        let export: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap_or_default();
        export["cron"][0]["state"]["runs"].as_u64().unwrap_or(0)
    };
    support::eventually("two runs kept", || runs() >= 2);
    drop(up);
    assert_eq!(std::fs::read(dir.join("cron/jobs.json")).unwrap(), jobs, "jobs.json left as it was");
    let export = support::raven(dir, &["state", "export", "--json"]);
    let export: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let state = &export["cron"][0]["state"];
    assert!(state["runs"].as_u64().is_some_and(|n| n >= 2) && state["last_run_at"].is_string(), "{export}");
    let listed: serde_json::Value =
        serde_json::from_slice(&support::raven(dir, &["cron", "list", "--json"]).stdout).unwrap();
    assert_eq!(&listed[0]["state"], state);
    let text = String::from_utf8_lossy(&support::raven(dir, &["state", "export"]).stdout).into_owned();
    assert!(text.contains("cron: 1 jobs") && text.contains(&format!("runs {}", state["runs"])), "{text}");
}
