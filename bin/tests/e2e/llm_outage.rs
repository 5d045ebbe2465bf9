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

/// A model that refuses the key, one that answers a web page and one that never answers:
/// `/remind` works at once with each, and what needs the model says what is wrong with its
/// setup, naming the key's variable when the key was refused.
#[test]
fn a_broken_model_setup_never_holds_remind_and_says_what_is_wrong() {
    use std::sync::Arc;
    use support::fake_http::FakeHttp;
    let refusing = FakeHttp::start(Arc::new(|_: &support::fake_http::Seen| {
        (401, r#"{"error": {"message": "Incorrect API key provided"}}"#.to_owned())
    }));
    let page = FakeHttp::start(Arc::new(|_: &support::fake_http::Seen| {
        (200, "<!DOCTYPE html><html><body>Welcome to nginx!</body></html>".to_owned())
    }));
    // Takes the connection and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let cases = [
        (refusing.url.clone(), Some(&refusing), "`RAVEN_TEST_LLM_KEY`, which is not set"),
        (page.url.clone(), Some(&page), "answered a web page"),
        (silent_url, None, "The language model cannot be reached right now"),
    ];
    for (url, model, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let config = format!(
            "[llm]\nbase_url = \"{url}/v1\"\napi_key_env = \"RAVEN_TEST_LLM_KEY\"\ntimeout_s = 2\n\
             [llm.retry]\nattempts = 1\n[discovery]\nenabled = false\n"
        );
        support::write_config(dir, &config);
        let reply = said(dir, "/remind in 10m tea");
        assert!(reply.starts_with("Reminder set:"), "{url}: {reply}");
        let asked = model.map_or(0, |m| m.requests("/v1/chat/completions").len());
        assert_eq!(asked, 0, "{url}: /remind never waits on the model: it is not asked");
        let out = support::raven(dir, &["say", "what is on my plate today?"]);
        let answer = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(answer.contains(says), "{url}: {answer}");
        assert!(!answer.contains("Incorrect API key") || answer.contains("RAVEN_TEST_LLM_KEY"), "{answer}");
    }
    drop(silent);
}
