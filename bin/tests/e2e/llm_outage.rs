//! The outage fallback from outside: with `[llm] base_url` at a port on 127.0.0.1 where nothing
//! listens, `/remind in 10m tea` still makes its job and answers (on an engine of its own and
//! through a running supervisor), and anything else is told the model cannot be reached.

use crate::support;

const CONFIG: &str = "\
[llm]
base_url = \"http://127.0.0.1:1/v1\"
model = \"gpt-4o-mini\"
[llm.retry]
attempts = 1
[discovery]
enabled = false
";

fn said(dir: &std::path::Path, text: &str) -> String {
    let out = support::raven(dir, &["say", text]);
    assert!(out.status.success(), "{text}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn jobs(dir: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("cron/jobs.json")).unwrap_or_default();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let jobs = file["jobs"].as_array().cloned().unwrap_or_default();
    jobs.iter().map(|j| j["message"].as_str().unwrap_or_default().to_owned()).collect()
}

#[test]
fn remind_works_with_the_model_unreachable_and_anything_else_is_told_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    support::write_config(dir, CONFIG);

    // No supervisor: the turn runs on an engine of its own.
    let reply = said(dir, "/remind in 10m tea");
    assert!(reply.starts_with("Reminder set:"), "{reply}");
    assert_eq!(jobs(dir), ["tea"]);

    // Through the running supervisor, whose model is as unreachable.
    let _up = support::Killed(support::up(dir, CONFIG, &[]));
    support::wait_ready(dir);
    let reply = said(dir, "/remind in 20m cake");
    assert!(reply.starts_with("Reminder set:"), "{reply}");
    assert_eq!(jobs(dir), ["tea", "cake"]);
    let reply = said(dir, "what is on my plate today?");
    assert!(reply.starts_with("The language model cannot be reached right now"), "{reply}");
}
