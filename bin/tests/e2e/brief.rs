//! The morning brief on the phone, with no model: one message for the day (here from a few
//! minutes ago, so the test holds at any hour), its items each with their own actions (Telegram: a row
//! of buttons an item; ntfy: "later" on each of the first three), and a "later" on one item
//! puts off that item alone (the job that sends it again holds its text, not the brief's);
//! `/stop 1` typed in the chat stops item 1.
//! A second tick sends no second brief and no heads-up of its own for an item it told.

use super::ntfy_phone::{topic_config, Topic};
use super::telegram::{config, message, sent_to, tap, Bot, TOKEN};
use crate::support;
use support::week::ok;

/// A note due in three hours (today, or early tomorrow late at night) and the rent, a
/// payment, due in a day and two hours (its heads-up comes days ahead).
fn notes(dir: &std::path::Path) {
    let at = |h: i64| (support::now_local() + chrono::Duration::hours(h)).format("%Y-%m-%d %H:%M").to_string();
    let memory = format!("- [ ] Call the bank due: {}\n- [ ] Pay the rent due: {}\n", at(3), at(26));
    std::fs::write(dir.join("workspace/MEMORY.md"), memory).unwrap();
}

/// The brief from five minutes ago (from midnight in the first minutes of a day).
fn brief_config() -> String {
    let now = support::now_local();
    let from = if now.time() < chrono::NaiveTime::from_hms_opt(0, 5, 0).unwrap() {
        "00:00".to_owned()
    } else {
        (now - chrono::Duration::minutes(5)).format("%H:%M").to_string()
    };
    format!("[brief]\nat = \"{from}\"\n[policy]\nsession_cooldown_minutes = 0\n")
}

/// The job a "later" made: its message, from `raven cron list`.
fn put_off(dir: &std::path::Path) -> String {
    let jobs = ok(dir, &["cron", "list"]);
    assert!(!jobs.contains("Good morning") && !jobs.contains("Call the bank"), "only the item tapped: {jobs}");
    jobs
}

#[test]
fn the_brief_reaches_telegram_once_with_a_row_an_item_and_later_puts_off_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let (bot, fake) = Bot::serve();
    let more = format!("[delivery]\ndefault_targets = [\"telegram:42\"]\n{}", brief_config());
    notes(dir);
    let _up = support::Killed(support::up(dir, &config(&fake, &more), &[("RAVEN_TELEGRAM_TOKEN", TOKEN)]));
    support::wait_ready(dir);
    ok(dir, &["tick"]);
    let briefs = || {
        let sent = fake.requests("/sendMessage");
        sent.into_iter()
            .filter(|s| s.body["text"].as_str().unwrap_or_default().contains("Good morning"))
            .collect::<Vec<_>>()
    };
    support::eventually("the brief", || briefs().len() == 1);
    let brief = briefs()[0].body.clone();
    let text = brief["text"].as_str().unwrap();
    assert!(text.contains("Call the bank") && text.contains("Pay the rent"), "{text}");
    let rows = brief["reply_markup"]["inline_keyboard"].as_array().expect("buttons under the brief").clone();
    assert_eq!(rows.len(), 2, "a row an item: {rows:?}");
    let label = |r: usize, b: usize| rows[r][b]["text"].as_str().unwrap().to_owned();
    assert_eq!([label(0, 0), label(0, 1), label(1, 1), label(1, 2)], ["1 👍", "1 ⏰", "2 ⏰", "2 🛑"]);

    ok(dir, &["tick"]);
    let texts: Vec<String> =
        fake.requests("/sendMessage").iter().map(|s| s.body["text"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(briefs().len(), 1, "one brief a day: {texts:?}");
    // MarkdownV2 escapes the hyphen: `Heads\-up`.
    assert!(!texts.iter().any(|t| t.contains("Heads")), "no heads-up of its own for an item told: {texts:?}");

    let rent = text.lines().position(|l| l.contains("Pay the rent")).unwrap();
    let row = if text.lines().nth(rent).unwrap().starts_with("1.") { 0 } else { 1 };
    bot.push(tap(1, 42, rows[row][1]["callback_data"].as_str().unwrap()));
    support::eventually("the tap answered", || fake.requests("/answerCallbackQuery").len() == 1);
    let answered = fake.requests("/answerCallbackQuery")[0].body["text"].as_str().unwrap_or_default().to_owned();
    assert!(answered.starts_with("Later, then: I'll send it again "), "{answered}");
    assert!(put_off(dir).contains("Pay the rent"), "the item's own text");

    // Typed, by its number: item 1 (the bank, the sooner) is stopped, and its topic muted.
    let before = sent_to(&fake, "42").len();
    bot.push(message(2, 42, "/stop 1"));
    support::eventually("the answer", || sent_to(&fake, "42").len() > before);
    let stopped = sent_to(&fake, "42")[before].clone();
    assert!(stopped.contains("as a stop") && stopped.contains("bank"), "{stopped}");
}

#[test]
fn the_brief_reaches_ntfy_with_later_on_each_item_and_later_puts_off_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let topic = Topic::default();
    let ntfy = topic.serve();
    let (config, listen) = topic_config(&ntfy, &brief_config());
    notes(dir);
    let _up = support::Killed(support::up(dir, &config, &[]));
    support::wait_ready(dir);
    let (addr, _) = support::gateway(dir);
    ok(dir, &["tick"]);
    let brief = || topic.ravens().into_iter().find(|m| m["message"].to_string().contains("Good morning"));
    support::eventually("the brief", || brief().is_some());
    let brief = brief().unwrap();
    let text = brief["message"].as_str().unwrap().to_owned();
    let actions = brief["actions"].as_array().expect("actions under the brief").clone();
    let labels: Vec<&str> = actions.iter().map(|a| a["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["⏰ 1", "⏰ 2"], "{text}");

    let n = text.lines().find(|l| l.contains("Pay the rent")).unwrap().split('.').next().unwrap().to_owned();
    let later = actions.iter().find(|a| a["label"] == format!("⏰ {n}")).unwrap();
    let path = later["url"].as_str().unwrap().trim_start_matches(&format!("http://{listen}")).to_owned();
    // The publish seen, the supervisor writes the brief and each item to the feedback log.
    let dispatched = || std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    support::eventually("the brief's records", || dispatched().matches("\"dispatched\"").count() >= 3);
    let (code, body) = support::http(&addr, "POST", &path, None, b"");
    assert_eq!(code, 200, "{body}");
    let recorded: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(recorded["recorded"]["verdict"], "later", "{body}");
    let again = recorded["recorded"]["again_job"].as_str().expect("the job that sends it again");
    let jobs = put_off(dir);
    assert!(jobs.contains(again) && jobs.contains("Pay the rent"), "{jobs}");
    let said: Vec<String> = topic.ravens().iter().map(|m| m["message"].to_string()).collect();
    assert!(
        !said.iter().any(|t| t.contains("Heads-up")),
        "no heads-up of its own for an item told: {said:?} {}",
        ok(dir, &["log"])
    );
}
