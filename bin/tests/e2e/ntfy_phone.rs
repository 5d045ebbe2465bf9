//! A first week from the phone with no model, on ntfy (a local stand-in that keeps the topic:
//! what Raven publishes and what the phone publishes, read back by `GET /<topic>/json`):
//! `/start`, `/remind` (the confirmation says the text and the time), `/list`, `/cancel`; the
//! later button puts a nudge off (a job sends it again), and `/stop` after a nudge and then a
//! cron reminder mutes the nudge's topic. Raven never answers its own messages (each answer
//! is the very next thing published: an answer to its own would come between). Each verdict
//! is in `raven why` and in the supervisor's metrics.

use crate::support;
use support::week::ok;

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use support::fake_http::{FakeHttp, Seen};

pub(super) const TOPIC: &str = "raven-phone";

/// The topic as ntfy keeps it: every message published to it, Raven's and the phone's.
#[derive(Clone, Default)]
pub(super) struct Topic(Arc<Mutex<Vec<Value>>>);

impl Topic {
    /// A message published to the topic; its id.
    fn publish(&self, mut m: Value) -> String {
        let mut all = self.0.lock().unwrap();
        let id = format!("m{}", all.len());
        m["id"] = json!(id);
        m["event"] = json!("message");
        m["time"] = json!(chrono::Utc::now().timestamp());
        all.push(m);
        id
    }

    /// What the phone publishes from the app: words, no tags.
    fn phone(&self, words: &str) {
        self.publish(json!({"topic": TOPIC, "message": words}));
    }

    /// What Raven published so far.
    pub(super) fn ravens(&self) -> Vec<Value> {
        self.0.lock().unwrap().iter().filter(|m| m.get("tags").is_some()).cloned().collect()
    }

    pub(super) fn serve(&self) -> FakeHttp {
        let topic = self.clone();
        FakeHttp::start(Arc::new(move |seen: &Seen| match seen.method.as_str() {
            "POST" => (200, json!({"id": topic.publish(seen.body.clone())}).to_string()),
            _ if seen.path.starts_with(&format!("/{TOPIC}/json")) => {
                let all = topic.0.lock().unwrap();
                (200, all.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"))
            }
            _ => (404, json!({"error": "not found"}).to_string()),
        }))
    }
}

/// A config with the gateway on a free port (`public_url` its own address, so nudges carry
/// buttons), the topic served by `ntfy` as the default target, and `more`; the gateway's
/// address.
pub(super) fn topic_config(ntfy: &FakeHttp, more: &str) -> (String, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let config = format!(
        "[gateway]\nlisten = \"{listen}\"\npublic_url = \"http://{listen}\"\n{more}\
         [delivery]\ndefault_targets = [\"ntfy:{TOPIC}\"]\n\
         [channels.ntfy]\nenabled = true\nserver = \"{}\"\ntopic = \"{TOPIC}\"\npoll_s = 1\n",
        ntfy.url
    );
    (config, listen)
}

/// Writes a note due in `minutes` and ticks: the nudge published.
fn nudge(dir: &std::path::Path, topic: &Topic, title: &str, minutes: i64) -> Value {
    let due = (support::now_local() + chrono::Duration::minutes(minutes)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] {title} due: {due}\n")).unwrap();
    let tick = ok(dir, &["tick"]);
    assert!(tick.contains(&format!("ntfy:{TOPIC}")), "{tick}");
    support::eventually("the nudge", || topic.ravens().iter().any(|m| m["message"].to_string().contains(title)));
    topic.ravens().into_iter().rev().find(|m| m["message"].to_string().contains(title)).unwrap()
}

#[test]
fn the_phone_steers_reminders_and_feedback_through_the_topic_with_no_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let topic = Topic::default();
    let ntfy = topic.serve();
    let more = "[policy]\nsession_cooldown_minutes = 0\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    let (config, listen) = topic_config(&ntfy, more);
    let _up = support::Killed(support::up(dir, &config, &[]));
    support::wait_ready(dir);
    let (addr, _) = support::gateway(dir);
    let said = |n: usize| {
        support::eventually("an answer", || topic.ravens().len() >= n);
        topic.ravens()[n - 1]["message"].as_str().unwrap().to_owned()
    };

    topic.phone("/start");
    assert!(said(1).starts_with("Hello! I'm Raven."), "{}", said(1));
    topic.phone("/remind in 2h call the dentist");
    let set = said(2);
    assert!(set.contains("call the dentist") && set.contains("When:") && set.contains("Id:"), "{set}");
    let id = set.split("Id: ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    topic.phone("/remind every weekday at 8:30 standup");
    assert!(said(3).contains("When: every weekday at 08:30"), "the recurrence in words: {}", said(3));
    topic.phone("/list");
    assert!(
        said(4).contains(&id) && said(4).contains("call the dentist") && said(4).contains("standup"),
        "{}",
        said(4)
    );
    topic.phone(&format!("/cancel {id}"));
    assert!(said(5).contains(&format!("Cancelled {id}")), "{}", said(5));
    assert!(!ok(dir, &["cron", "list"]).contains(&id), "gone from the jobs too");

    // The later button on a nudge: not a rating; the message comes again, as a job.
    let bank = nudge(dir, &topic, "Call the bank", 20);
    let actions = bank["actions"].as_array().expect("buttons under the nudge");
    let later = actions.iter().find(|a| a["label"].as_str().unwrap().contains("later")).unwrap();
    let path = later["url"].as_str().unwrap().trim_start_matches(&format!("http://{listen}")).to_owned();
    let (code, body) = support::http(&addr, "POST", &path, None, b"");
    assert_eq!(code, 200, "{body}");
    let recorded: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(recorded["recorded"]["verdict"], "later", "{body}");
    let again = recorded["recorded"]["again_job"].as_str().expect("the job that sends it again");
    let jobs = ok(dir, &["cron", "list"]);
    assert!(jobs.contains(again) && jobs.contains("Call the bank"), "{jobs}");

    // A nudge, then a cron reminder: /stop means the nudge, and mutes its topic.
    nudge(dir, &topic, "Pay the rent", 25);
    ok(dir, &["cron", "add", "--in", "1s", "--to", &format!("ntfy:{TOPIC}"), "Drink some water"]);
    support::eventually("the cron reminder", || {
        topic.ravens().iter().any(|m| m["message"].to_string().contains("Drink some water"))
    });
    let before = topic.ravens().len();
    topic.phone("/stop");
    let stopped = said(before + 1);
    assert!(stopped.contains("as a stop") && stopped.contains("rent"), "{stopped}");
    let explain = ok(dir, &["policy", "explain", "--content", "Pay the rent", "--priority", "high"]);
    assert!(explain.contains("topic `rent` muted by the user until"), "{explain}");

    support::week::later_and_stop_are_told(dir);
}
