use super::super::tests::{commands, now, say};
use crate::journal::{CronFire, Event, Gate, Journal, Tick, VerdictGiven};
use chrono::Duration;

fn tick(outcome: &str, reason: &str) -> Event {
    Event::Tick(Tick {
        route: "planner".into(),
        action: if outcome == "skipped" { "skip" } else { "nudge" }.into(),
        reason: reason.into(),
        outcome: outcome.into(),
        fast_path: None,
        nudge_id: None,
        targets: Vec::new(),
        error: None,
    })
}

fn held(content: &str) -> Event {
    Event::Gate(Gate {
        step: "check".into(),
        allow: false,
        layer: Some("6".into()),
        layer_name: Some("session_cooldown".into()),
        reason: "session telegram:111 was nudged at 09:30; cooldown 30m".into(),
        action: "nudge".into(),
        topic: Some("rent".into()),
        session: Some("telegram:111".into()),
        content: content.into(),
    })
}

/// A morning in the journal: quiet, a reminder, a heads-up held back, quiet again, a verdict
/// and a cron reminder, ten minutes apart up to `now()`.
fn morning(dir: &std::path::Path) {
    let journal = Journal::at(dir.join("journal.jsonl"));
    let verdict = VerdictGiven {
        nudge_id: "n-1".into(),
        verdict: "later".into(),
        topic: Some("bank".into()),
        reason: None,
        job: None,
    };
    let events = [
        tick("skipped", "nothing due, no routine now"),
        tick("delivered", "deadline `Call the bank` is due at 10:20"),
        held("Heads-up: Pay the rent is due at 11:30."),
        tick("skipped", "nothing due, no routine now"),
        Event::Verdict(verdict),
        Event::Cron(CronFire { job: "k3x9p2".into(), delivered_to: vec!["telegram:111".into()] }),
    ];
    for (i, e) in events.into_iter().enumerate() {
        journal.record(now() - Duration::minutes(50 - 10 * i as i64), Some("sentinel"), e);
    }
}

#[test]
fn why_tells_the_latest_decisions_newest_first_in_chat_words() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    assert!(say(&c, "/why").unwrap().starts_with("Nothing decided yet"));
    morning(dir.path());
    let why = say(&c, "/why").unwrap();
    let lines: Vec<&str> = why.lines().collect();
    assert_eq!(lines[0], "What I decided lately, newest first (Europe/Paris):", "{why}");
    assert_eq!(lines[1], "• 10:00: your reminder k3x9p2 went out.", "{why}");
    assert_eq!(lines[2], "• 09:50: you said later (bank).", "{why}");
    assert_eq!(lines[3], "• 09:40: nothing worth a message: nothing due, no routine now.", "{why}");
    assert!(lines[4].starts_with("• 09:30: I held back “Heads-up: Pay the rent is due at 11:30.”: session"), "{why}");
    assert!(lines[4].ends_with("(session cooldown)."), "{why}");
    assert_eq!(lines[5], "• 09:20: I sent a message: deadline Call the bank is due at 10:20.", "no backticks: {why}");
    assert_eq!(lines.len(), 6, "one quiet tick, the newest: {why}");

    let mut waits = tick("failed", "deadline `Call the bank` is due at 10:20");
    if let Event::Tick(t) = &mut waits {
        t.error = Some("telegram:111: not delivered, kept in the outbox: telegram is failing".into());
    }
    Journal::at(dir.path().join("journal.jsonl")).record(now(), Some("sentinel"), waits);
    let why = say(&c, "/why").unwrap();
    assert_eq!(why.lines().nth(1), Some("• 10:00: a message waits to be delivered: telegram is failing."), "{why}");
}

#[test]
fn why_with_words_keeps_what_is_about_them() {
    let dir = tempfile::tempdir().unwrap();
    let c = commands(dir.path(), false);
    morning(dir.path());
    let rent = say(&c, "/why rent").unwrap();
    assert!(rent.starts_with("About “rent”, newest first"), "{rent}");
    assert_eq!(rent.lines().count(), 2, "the held-back heads-up only: {rent}");
    let bank = say(&c, "/why Bank").unwrap();
    assert_eq!(bank.lines().count(), 3, "the reminder and the verdict: {bank}");
    let none = say(&c, "/why dentist").unwrap();
    assert!(none.starts_with("Nothing decided about “dentist” lately."), "{none}");
}
