//! The chat commands on a real jobs file, at a fixed time, in Paris.

use super::*;
use crate::clock::ManualClock;
use crate::cron::store::JobsStore;
use chrono::{Duration, TimeZone, Utc};

/// Friday 2026-12-04 10:00 in Paris.
pub(super) fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, 9, 0, 0).unwrap()
}

fn telegram() -> crate::config::RavenConfig {
    let mut config = crate::config::RavenConfig::default();
    config.channels.telegram.enabled = true;
    config
}

pub(super) fn commands(dir: &std::path::Path, has_model: bool) -> ChatCommands {
    let jobs = JobsCron {
        store: JobsStore::new(dir.join("jobs.json")),
        tz: chrono_tz::Europe::Paris,
        order: Default::default(),
        channels: crate::delivery::targets::Channels::of(&telegram()),
    };
    let strikes = Strikes { limit: 5, min_gap: Duration::days(1) };
    let journal = dir.join("journal.jsonl");
    let (language, memory) = (Default::default(), dir.join("MEMORY.md"));
    ChatCommands { jobs, clock: ManualClock::new(now()).shared(), strikes, has_model, journal, language, memory }
}

pub(super) fn say(c: &ChatCommands, text: &str) -> Option<String> {
    parse(text).map(|cmd| match c.answer(cmd, "telegram:111", text) {
        Answer::Done(t) | Answer::Refused(t) => t,
    })
}

/// Whether the command was refused (nothing done).
fn refused(c: &ChatCommands, text: &str) -> bool {
    matches!(parse(text).map(|cmd| c.answer(cmd, "telegram:111", text)), Some(Answer::Refused(_)))
}

#[test]
fn a_command_that_did_nothing_is_a_refusal_and_one_that_did_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    for text in ["/remind", "/remind at 25:99 tea", "/remind sometime tea", "/cancel", "/cancel nosuch"] {
        assert!(refused(&c, text), "{text}: {:?}", say(&c, text));
    }
    assert!(!refused(&c, "/remind in 1h tea"));
    let id = c.jobs.store.load().unwrap().jobs[0].id.clone();
    assert!(!refused(&c, &format!("/cancel {id}")));
    assert!(!refused(&c, "/list") && !refused(&c, "/help"));
}

#[test]
fn start_and_help_need_no_model_and_read_as_chat_text() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let start = say(&c, "/start").unwrap();
    assert!(start.starts_with("Hello! I'm Raven."), "{start}");
    for text in [start, say(&c, "/help@raven_bot").unwrap()] {
        for command in ["/remind", "/list", "/cancel", "/pause", "/resume", "/ok", "/stop", "/earlier", "/snooze"] {
            assert!(text.contains(command), "{command} missing: {text}");
        }
        assert!(!text.contains('`') && text.contains("Europe/Paris"), "{text}");
        assert!(text.contains("No language model is set up"), "{text}");
    }
    assert_eq!(say(&c, "how are you?"), None, "not a command: the agent answers");
    assert_eq!(say(&c, "/ok"), None, "a feedback command: answered by its own hook");
}

#[test]
fn a_reminder_confirms_its_text_schedule_next_time_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), true);
    let said = say(&c, "/remind every weekday at 8:30 standup").unwrap();
    let job = c.jobs.store.load().unwrap().jobs[0].clone();
    assert_eq!(
        said,
        format!(
            "Reminder set: “standup”\nWhen: every weekday at 08:30 (Europe/Paris)\nNext: Mon 7 Dec at 08:30\nId: {0} (/cancel {0} removes it)",
            job.id
        )
    );
    assert_eq!(job.target.as_deref(), Some("telegram:111"));
    let water = say(&c, "/remind every 2 hours drink water").unwrap();
    assert!(water.contains("every 2h") && water.contains("If 5 in a row go unanswered, I pause it"), "{water}");
}

#[test]
fn two_times_make_two_jobs_and_the_time_may_come_last() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let said = say(&c, "/remind every day at 9am and 5pm meds").unwrap();
    let jobs = c.jobs.store.load().unwrap().jobs;
    assert_eq!(jobs.len(), 2, "{said}");
    assert!(jobs.iter().all(|j| j.message == "meds"), "{jobs:?}");
    assert!(said.contains("every day at 09:00") && said.contains("every day at 17:00"), "{said}");
    let call = say(&c, "/remind call mum at 7pm").unwrap();
    assert!(call.contains("“call mum”") && call.contains("Fri 4 Dec at 19:00"), "{call}");
}

#[test]
fn unreadable_or_oversized_input_schedules_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let bad = say(&c, "/remind whenever you like").unwrap();
    assert!(bad.contains("I could not read the time") && bad.contains("/remind <when> <text>"), "{bad}");
    let long = say(&c, &format!("/remind in 1h {}", "x".repeat(2_000))).unwrap();
    assert!(long.contains("at most 1000 characters"), "{long}");
    assert!(say(&c, "/remind").unwrap().starts_with("Write it as"));
    let half = say(&c, "/remind every day at 9am and later meds").unwrap();
    assert!(
        half.contains("“every day at 9am”") && half.contains("“and later meds”") && half.contains("Nothing scheduled"),
        "{half}"
    );
    assert!(c.jobs.store.load().unwrap().jobs.is_empty());
}

#[test]
fn list_cancel_pause_and_resume_from_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    assert!(say(&c, "/list").unwrap().starts_with("No reminders yet"));
    say(&c, "/remind tomorrow at 9 dentist");
    say(&c, "/remind in 10m stretch");
    let ids: Vec<String> = c.jobs.store.load().unwrap().jobs.iter().map(|j| j.id.clone()).collect();
    let list = say(&c, "/list").unwrap();
    let (stretch, dentist) = (list.find("stretch").unwrap(), list.find("dentist").unwrap());
    assert!(stretch < dentist, "soonest first: {list}");
    assert!(list.contains(&ids[0]) && list.contains("once, on Sat 5 Dec at 09:00"), "{list}");
    assert!(say(&c, &format!("/pause {}", ids[0])).unwrap().starts_with(&format!("Paused {}", ids[0])));
    assert!(say(&c, "/list").unwrap().contains("Paused:"));
    assert!(say(&c, &format!("/resume {}", ids[0])).unwrap().contains("Next: Sat 5 Dec at 09:00"));
    assert_eq!(
        say(&c, &format!("/cancel {}", ids[1])).unwrap(),
        format!("Cancelled {}: “stretch”. It will not come again.", ids[1])
    );
    assert!(say(&c, "/cancel nope").unwrap().contains("There is no reminder nope"));
    assert_eq!(c.jobs.store.load().unwrap().jobs.len(), 1);
}

#[test]
fn a_dotted_time_after_at_reads_as_a_clock_time_first_or_last() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let last = say(&c, "/remind call mum at 8.30").unwrap();
    assert!(last.starts_with("Reminder set: “call mum”") && last.contains("at 08:30"), "{last}");
    let first = say(&c, "/remind tomorrow at 18.45 pick up the kids").unwrap();
    assert!(first.starts_with("Reminder set: “pick up the kids”") && first.contains("18:45"), "{first}");
}

/// A time the clocks skip (Paris, 28 March 2027: 02:00 becomes 03:00) is set for the first
/// minute after the gap, and the confirmation says so.
#[test]
fn a_time_in_the_spring_gap_is_said_not_moved_silently() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let said = say(&c, "/remind 2027-03-28 at 2:30 water the plants").unwrap();
    assert!(said.contains("Note: 02:30 does not exist on Sun 28 Mar in Europe/Paris"), "{said}");
    assert!(said.contains("set for 03:00"), "{said}");
    let plain = say(&c, "/remind 2027-03-29 at 2:30 water the plants").unwrap();
    assert!(!plain.contains("Note:"), "{plain}");
}

/// A reminder written in Chinese is confirmed in Chinese; with notes in Chinese (`auto`),
/// `/list`, `/pause`, `/help` answer in Chinese too; English notes keep English.
#[test]
fn the_answers_are_in_the_user_s_language() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    let set = say(&c, "/remind 明天上午10点 交报告").unwrap();
    assert!(set.starts_with("提醒已设：「交报告」\n时间：一次，12月5日（周六）10:00（Europe/Paris）"), "{set}");
    assert!(set.contains("编号：") && set.contains("/cancel"), "{set}");
    let daily = say(&c, "/remind 每个工作日 8:30 站会").unwrap();
    assert!(daily.contains("时间：每个工作日 08:30") && daily.contains("下次：12月7日（周一）08:30"), "{daily}");
    assert!(say(&c, "/list").unwrap().starts_with("Your reminders"), "English notes: English");

    std::fs::write(dir.path().join("MEMORY.md"), "# 备忘\n每月20号 付保姆工资\n").unwrap();
    let list = say(&c, "/list").unwrap();
    assert!(
        list.starts_with("你的提醒（Europe/Paris），最近的在前：") && list.contains("：「站会」，每个工作日 08:30"),
        "{list}"
    );
    let id = c.jobs.store.load().unwrap().jobs[0].id.clone();
    assert_eq!(say(&c, &format!("/pause {id}")).unwrap(), format!("已暂停 {id}。恢复：/resume {id}"));
    assert!(say(&c, "/cancel").unwrap().starts_with("请说明是哪一条"));
    assert!(say(&c, "/start").unwrap().starts_with("你好！我是 Raven"));
}
