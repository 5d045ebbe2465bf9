//! The LLM breaker from outside: a supervisor whose model cannot be reached marks it down after
//! its failures, and `raven status` says so, in text and in `--json`.

use crate::support;

const CONFIG: &str = "\
[llm]
base_url = \"http://127.0.0.1:1/v1\"
model = \"gpt-4o-mini\"
[llm.retry]
attempts = 1
[llm.breaker]
failures = 1
open_s = 600
[discovery]
enabled = false
";

#[test]
fn an_unreachable_model_is_marked_down_and_status_says_until_when() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _up = support::Killed(support::up(dir, CONFIG, &[]));
    support::wait_ready(dir);
    let status = |args: &[&str]| String::from_utf8_lossy(&support::raven(dir, args).stdout).into_owned();
    assert!(status(&["status"]).contains("llm: openai gpt-4o-mini: up (0 of 1"), "{}", status(&["status"]));

    let tick = support::raven(dir, &["tick"]);
    assert!(tick.status.success(), "a failed Planner call is a skip: {tick:?}");
    let json: serde_json::Value = serde_json::from_str(&status(&["status", "--json"])).unwrap();
    let llm = &json["llm"];
    assert_eq!(llm["state"], "open", "{json}");
    assert_eq!((llm["failures"].as_u64(), llm["threshold"].as_u64()), (Some(1), Some(1)), "{json}");
    assert!(llm["open_until"].is_string() && llm["last_error"].as_str().unwrap_or("").contains("reached"), "{json}");
    let text = status(&["status"]);
    assert!(text.contains("llm: openai gpt-4o-mini: DOWN until ") && text.contains("not called until then"), "{text}");
}
