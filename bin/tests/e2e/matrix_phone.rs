//! A first week in a Matrix room with no model, against a real Synapse (`scripts/synapse.sh`):
//! the user's room, Raven invited, `raven channels test matrix` before `raven up`; `/start`, `/remind` (the confirmation says the text and the time), `/list`, `/cancel`; a ⏰
//! reaction puts a nudge off (a job sends it again, and the room is told when), and `/stop`
//! after a nudge and then a cron reminder mutes the nudge's topic. Each verdict given in the
//! gateway is in `raven why` and in the supervisor's metrics.

use super::matrix::{room_of_alice, until, Alice};
use crate::support;
use support::servers::Server;
use support::week::{ok, text};

/// Writes a note due in `minutes` and ticks: the nudge's event in the room.
fn nudge(dir: &std::path::Path, alice: &Alice, title: &str, minutes: i64) -> String {
    let due = (support::now_local() + chrono::Duration::minutes(minutes)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] {title} due: {due}\n")).unwrap();
    ok(dir, &["tick"]);
    until("the nudge in the room", || alice.said_by_raven().iter().any(|(_, b)| b.contains(title)));
    alice.said_by_raven().into_iter().find(|(_, b)| b.contains(title)).unwrap().0
}

#[test]
fn the_room_steers_reminders_and_feedback_with_no_model() {
    if support::servers::skipped(module_path!()) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, hs_dir) = (tmp.path().join("data"), tmp.path().join("synapse"));
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let synapse = Server::start("synapse.sh", &hs_dir);
    let base = synapse.address.clone();
    let alice = room_of_alice(&base);
    let room = alice.room.clone();
    let config = format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n[policy]\nsession_cooldown_minutes = 0\n\
         [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n[delivery]\ndefault_targets = [\"matrix:{room}\"]\n\
         [channels.matrix]\nenabled = true\nhomeserver = \"{base}\"\nuser_id = \"@raven:raven.test\"\n\
         room_id = \"{room}\"\nallowed_users = [\"@alice:raven.test\"]\nsync_timeout_s = 1\n"
    );
    // The README's order: `raven channels test matrix` before `raven up`, Raven only invited.
    support::write_config(&dir, &config);
    let tested = std::process::Command::new(support::raven_bin())
        .arg("--data-dir")
        .arg(&dir)
        .args(["channels", "test", "matrix"])
        .env("RAVEN_MATRIX_PASSWORD", "raven-pass")
        .env_remove("RAVEN_HOME")
        .output()
        .unwrap();
    assert!(tested.status.success(), "{}{}", text(&tested.stdout), text(&tested.stderr));
    let _up = support::Killed(support::up(&dir, &config, &[("RAVEN_MATRIX_PASSWORD", "raven-pass")]));
    support::wait_ready(&dir);
    support::gateway(&dir);
    // The very first sync takes the room's position (history before it is not answered).
    let state = || std::fs::read_to_string(dir.join("gateway/matrix.json")).unwrap_or_default();
    until("the first sync", || state().contains("\"next_batch\": \""));
    // The test message is in the room; the answers come after it.
    let tested = alice.said_by_raven().len();
    assert_eq!(tested, 1, "{:?}", alice.said_by_raven());
    let said = |n: usize| {
        until("an answer", || alice.said_by_raven().len() >= tested + n);
        alice.said_by_raven()[tested + n - 1].1.clone()
    };

    alice.say("c1", "/start");
    assert!(said(1).starts_with("Hello! I'm Raven."), "{}", said(1));
    alice.say("c2", "/remind in 2h call the dentist");
    let set = said(2);
    assert!(set.contains("call the dentist") && set.contains("When:") && set.contains("Id:"), "{set}");
    let id = set.split("Id: ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    alice.say("c3", "/remind every weekday at 8:30 standup");
    assert!(said(3).contains("When: every weekday at 08:30"), "the recurrence in words: {}", said(3));
    alice.say("c4", "/list");
    assert!(
        said(4).contains(&id) && said(4).contains("call the dentist") && said(4).contains("standup"),
        "{}",
        said(4)
    );
    alice.say("c5", &format!("/cancel {id}"));
    assert!(said(5).contains(&format!("Cancelled {id}")), "{}", said(5));
    assert!(!ok(&dir, &["cron", "list"]).contains(&id), "gone from the jobs too");

    // ⏰ on a nudge (once the supervisor wrote its record, as a person reacting seconds later
    // would): not a rating; the room is told when it comes again, as a job.
    let bank = nudge(&dir, &alice, "Call the bank", 20);
    let feedback = || std::fs::read_to_string(dir.join("sentinel/feedback.jsonl")).unwrap_or_default();
    until("the nudge's record", || feedback().contains("\"dispatched\""));
    alice.react(&bank, "⏰");
    until("the later answer", || alice.said_by_raven().iter().any(|(_, b)| b.starts_with("Later, then: I'll send it")));
    assert!(ok(&dir, &["cron", "list"]).contains("Call the bank"));

    // A nudge, then a cron reminder: /stop means the nudge, and mutes its topic.
    nudge(&dir, &alice, "Pay the rent", 25);
    ok(&dir, &["cron", "add", "--in", "1s", "--to", &format!("matrix:{room}"), "Drink some water"]);
    until("the cron reminder", || alice.said_by_raven().iter().any(|(_, b)| b.contains("Drink some water")));
    let before = alice.said_by_raven().len() - tested;
    alice.say("c6", "/stop");
    let stopped = said(before + 1);
    assert!(stopped.contains("as a stop") && stopped.contains("rent"), "{stopped}");
    let explain = ok(&dir, &["policy", "explain", "--content", "Pay the rent", "--priority", "high"]);
    assert!(explain.contains("topic `rent` muted by the user until"), "{explain}");

    support::week::later_and_stop_are_told(&dir);
}
