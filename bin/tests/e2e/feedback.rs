//! The learning loop from outside, with no LLM: a nudge shows its short id; `raven feedback`
//! and the gateway's `POST /feedback` each record a verdict that the next `raven policy
//! explain` shows at once (no tick in between), refuse what they cannot record, and say how
//! to undo. The session line of the nudge is an assistant line marked proactive.

use crate::support;

use std::path::Path;

const SECRET: &str = "fb-secret";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A data dir with a deadline due in 20 minutes, ticked once: the short id of its nudge.
fn nudged(dir: &Path) -> String {
    support::write_config(dir, "");
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    let out = support::raven(dir, &["tick"]);
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.contains("] Reminder: Call the bank")).unwrap_or_else(|| panic!("{stdout}"));
    line["[raven ⏰ ".len()..line.find(']').unwrap()].to_owned()
}

fn explain(dir: &Path, content: &str) -> String {
    text(&support::raven(dir, &["policy", "explain", "--content", content, "--session", "telegram:9"]).stdout)
}

#[test]
fn raven_feedback_records_a_verdict_the_next_explain_shows_and_refuses_what_it_cannot_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let short = nudged(dir);
    // The nudge is in its conversation: an assistant line marked proactive, with its id.
    let session = std::fs::read_to_string(dir.join("sessions/cli_local.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(session.lines().last().unwrap()).unwrap();
    assert_eq!((line["role"].as_str(), line["proactive"].as_bool()), (Some("assistant"), Some(true)), "{line}");
    assert_eq!(line["topic"], "bank");
    assert!(line["nudge_id"].as_str().unwrap().starts_with("n-"), "{line}");

    assert!(explain(dir, "Stretch your legs").contains("verdict: allow"));
    let out = support::raven(dir, &["feedback", &short, "dismissed", "--reason", "not now"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains(&format!("recorded dismissed for [{short}]")), "{said}");
    assert!(said.contains(&format!("to undo: raven feedback {short} neutral")), "{said}");
    let e = explain(dir, "Stretch your legs");
    assert!(e.contains("verdict: deny at layer 7 (dismissal_cooldown)"), "{e}");

    let out = support::raven(dir, &["feedback", &short, "neutral"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(explain(dir, "Stretch your legs").contains("verdict: allow"), "the undo holds at once");

    for (args, says) in [
        (vec!["feedback", "abcdef", "accepted"], "no proactive message has the id `abcdef`"),
        (vec!["feedback", short.as_str(), "loved"], "unknown verdict `loved`"),
        (vec!["feedback", short.as_str()], "required"),
    ] {
        let out = support::raven(dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stdout));
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }

    let out = support::raven(dir, &["feedback", "--stop", "bank"]);
    assert!(text(&out.stdout).contains("Muted topic `bank`"), "{}", text(&out.stdout));
    assert!(explain(dir, "Call the bank").contains("topic `bank` muted by the user until"));
    let out = support::raven(dir, &["feedback", "--ok", "bank"]);
    assert!(text(&out.stdout).contains("Unmuted topic `bank`"), "{}", text(&out.stdout));
    assert!(!explain(dir, "Call the bank").contains("muted by the user"));
}

#[test]
fn post_feedback_records_a_verdict_by_id_or_by_session_behind_the_secret() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let short = nudged(dir);
    let _up = support::Killed(support::up(dir, "", &[("RAVEN_GATEWAY_SECRET", SECRET)]));
    support::wait_ready(dir);
    let mut addr = String::new();
    support::eventually("the gateway", || {
        let line = std::fs::read_to_string(dir.join("gateway.addr")).unwrap_or_default();
        addr = line.split(' ').next().unwrap_or_default().to_owned();
        std::net::TcpStream::connect(&addr).is_ok()
    });
    let post = |secret: Option<&str>, body: &str| support::http(&addr, "POST", "/feedback", secret, body.as_bytes());

    let (code, _) = post(None, r#"{"nudge_id": "x", "verdict": "accepted"}"#);
    assert_eq!(code, 401);
    let (code, body) = post(Some(SECRET), r#"{"nudge_id": "abcdef", "verdict": "accepted"}"#);
    assert_eq!(code, 404, "{body}");
    let (code, body) = post(Some(SECRET), r#"{"verdict": "accepted"}"#);
    assert_eq!(code, 422, "{body}");
    let (code, body) = post(Some(SECRET), r#"{"nudge_id": 7}"#);
    assert_eq!(code, 400, "{body}");
    assert!(explain(dir, "Stretch your legs").contains("verdict: allow"), "nothing was recorded");

    let (code, body) = post(Some(SECRET), r#"{"session": "cli:local", "verdict": "dismissed", "reason": "meh"}"#);
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["recorded"]["short_id"].as_str(), v["recorded"]["verdict"].as_str()),
        (Some(&*short), Some("dismissed"))
    );
    assert!(explain(dir, "Stretch your legs").contains("verdict: deny at layer 7"));
    let (code, body) = post(Some(SECRET), &format!(r#"{{"nudge_id": "{short}", "verdict": "accepted"}}"#));
    assert_eq!(code, 200, "{body}");
    assert!(explain(dir, "Stretch your legs").contains("verdict: allow"), "the latest verdict wins");
    // Both verdicts are in the decision journal, as one given on the command line would be.
    let log = text(&support::raven(dir, &["log"]).stdout);
    assert!(log.contains("dismissed") && log.contains("accepted"), "{log}");
    // The gateway's verdicts are counted by the supervisor's metrics too.
    let metrics = text(&support::raven(dir, &["metrics"]).stdout);
    for verdict in ["dismissed", "accepted"] {
        let line = format!("raven_feedback_verdicts_total{{verdict=\"{verdict}\"}} 1");
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }

    // Later: no rating, the message again in its conversation, as a job the user sees.
    let (code, body) = post(Some(SECRET), &format!(r#"{{"nudge_id": "{short}", "verdict": "later"}}"#));
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let job = v["recorded"]["again_job"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned();
    let jobs = text(&support::raven(dir, &["cron", "list"]).stdout);
    assert!(jobs.contains(&job) && jobs.contains("Call the bank"), "{jobs}");
    assert!(explain(dir, "Stretch your legs").contains("verdict: allow"), "later is no dismissal");
}
