//! A first week from the phone with no model, on Telegram (a local stand-in for the Bot API):
//! `/start`, `/remind` (the confirmation says the text and the time), `/list`, `/cancel`; the
//! ⏰ later button puts a nudge off (a job sends it again, the chat says when), and `/stop`
//! after a nudge and then a cron reminder mutes the nudge's topic. Each verdict given in the
//! gateway is in `raven why` and in the supervisor's metrics.

use super::telegram::{config, message, sent_to, tap, Bot, TOKEN};
use crate::support;
use support::week::ok;

/// Writes a note due in `minutes` and ticks: the nudge sent to the chat.
fn nudge(dir: &std::path::Path, fake: &support::fake_http::FakeHttp, title: &str, minutes: i64) -> serde_json::Value {
    let due = (support::now_local() + chrono::Duration::minutes(minutes)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] {title} due: {due}\n")).unwrap();
    let tick = ok(dir, &["tick"]);
    assert!(tick.contains("delivered to telegram:42"), "{tick}");
    let sent = fake.requests("/sendMessage");
    sent.into_iter().rev().find(|s| s.body["text"].as_str().unwrap_or_default().contains(title)).unwrap().body
}

/// A running `raven up` with its gateway, and the phone: the user's chat 42 on a Telegram
/// stand-in, every proactive message sent there.
/// (Fields drop in order: the engine is stopped before its data dir goes.)
struct Phone {
    _up: support::Killed,
    bot: std::sync::Arc<Bot>,
    fake: support::fake_http::FakeHttp,
    tmp: tempfile::TempDir,
}

impl Phone {
    fn up() -> Phone {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("workspace")).unwrap();
        let (bot, fake) = Bot::serve();
        let more = "[delivery]\ndefault_targets = [\"telegram:42\"]\n[policy]\nsession_cooldown_minutes = 0\n";
        let up = support::Killed(support::up(dir, &config(&fake, more), &[("RAVEN_TELEGRAM_TOKEN", TOKEN)]));
        support::wait_ready(dir);
        support::gateway(dir);
        Phone { _up: up, bot, fake, tmp }
    }

    /// The `n`th message chat 42 got, once it came.
    fn said(&self, n: usize) -> String {
        support::eventually("an answer", || sent_to(&self.fake, "42").len() >= n);
        sent_to(&self.fake, "42")[n - 1].clone()
    }
}

#[test]
fn the_phone_steers_reminders_and_feedback_with_no_model() {
    let phone = Phone::up();
    let (dir, bot, fake) = (phone.tmp.path(), &phone.bot, &phone.fake);
    let said = |n: usize| phone.said(n);

    bot.push(message(1, 42, "/start"));
    assert!(said(1).contains("Hello\\! I'm Raven"), "{}", said(1));
    bot.push(message(2, 42, "/remind in 2h call the dentist"));
    let set = said(2);
    assert!(set.contains("call the dentist") && set.contains("When:") && set.contains("Id:"), "{set}");
    let id = set.split("Id: ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    bot.push(message(3, 42, "/remind every weekday at 8:30 standup"));
    assert!(said(3).contains("When: every weekday at 08:30"), "the recurrence in words: {}", said(3));
    bot.push(message(4, 42, "/list"));
    assert!(
        said(4).contains(&id) && said(4).contains("call the dentist") && said(4).contains("standup"),
        "{}",
        said(4)
    );
    bot.push(message(5, 42, &format!("/cancel {id}")));
    assert!(said(5).contains(&format!("Cancelled {id}")), "{}", said(5));
    assert!(!ok(dir, &["cron", "list"]).contains(&id), "gone from the jobs too");

    // ⏰ later on a nudge: not a rating; the message comes again, as a job the user sees.
    let bank = nudge(dir, fake, "Call the bank", 20);
    let later = bank["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["text"].as_str().unwrap().contains("later"))
        .unwrap()["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    bot.push(tap(6, 42, &later));
    support::eventually("the tap answered", || fake.requests("/answerCallbackQuery").len() == 1);
    let answered = fake.requests("/answerCallbackQuery")[0].body["text"].as_str().unwrap_or_default().to_owned();
    assert!(answered.starts_with("Later, then: I'll send it again "), "{answered}");
    let jobs = ok(dir, &["cron", "list"]);
    assert!(jobs.contains("Call the bank"), "{jobs}");

    // A nudge, then a cron reminder: /stop means the nudge, and mutes its topic.
    nudge(dir, fake, "Pay the rent", 25);
    ok(dir, &["cron", "add", "--in", "1s", "--to", "telegram:42", "Drink some water"]);
    support::eventually("the cron reminder", || sent_to(fake, "42").iter().any(|t| t.contains("Drink some water")));
    let before = sent_to(fake, "42").len();
    bot.push(message(7, 42, "/stop"));
    let stopped = said(before + 1);
    assert!(stopped.contains("as a stop") && stopped.contains("rent"), "{stopped}");
    let explain = ok(dir, &["policy", "explain", "--content", "Pay the rent", "--priority", "high"]);
    assert!(explain.contains("topic `rent` muted by the user until"), "{explain}");

    // Each verdict given in the gateway is told by raven why and counted by the supervisor.
    support::week::later_and_stop_are_told(dir);
}

/// From the phone, with no model: a reminder written in Chinese is confirmed in Chinese;
/// "让我静静" keeps proactive messages quiet until the user's morning, and the chat says until
/// when and how to end it; `/snooze off` ends it and the next tick speaks again.
#[test]
fn chinese_words_are_answered_in_chinese_and_asking_for_quiet_keeps_raven_quiet_until_morning() {
    let phone = Phone::up();
    let (dir, bot, fake) = (phone.tmp.path(), &phone.bot, &phone.fake);
    let said = |n: usize| phone.said(n);

    bot.push(message(1, 42, "/remind 明天上午10点 交报告"));
    let set = said(1);
    assert!(set.contains("提醒已设：「交报告」") && set.contains("时间：一次，") && set.contains("编号："), "{set}");
    bot.push(message(2, 42, "今天太累了，让我静静"));
    let quiet = said(2);
    assert!(quiet.contains("我先不打扰你") && quiet.contains("08:00") && quiet.contains("/snooze off"), "{quiet}");
    let due = (support::now_local() + chrono::Duration::minutes(20)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Call the bank due: {due}\n")).unwrap();
    let held = ok(dir, &["tick"]);
    assert!(held.contains("snoozed by the user until"), "{held}");
    assert_eq!(sent_to(fake, "42").len(), 2, "nothing proactive reached the phone");

    bot.push(message(3, 42, "/snooze off"));
    assert!(said(3).contains("Snooze ended"), "English notes, an English command: {}", said(3));
    let tick = ok(dir, &["tick"]);
    assert!(tick.contains("delivered to telegram:42"), "{tick}");
}
