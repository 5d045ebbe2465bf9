//! A first week in the terminal with no model, as on the phone: `raven repl` attached to a
//! running supervisor, through a real pty (tmux). `/start`, `/remind` (the confirmation says
//! the text and the time), `/list`, `/cancel`; `/later` puts a nudge off (a job sends it
//! again, the answer says when), and `/stop` after a nudge and then a cron reminder mutes the
//! nudge's topic. Each verdict is in `raven why` and in the supervisor's metrics.

use crate::support;
use support::week::ok;

use support::tmux::Tmux;

fn note(dir: &std::path::Path, title: &str, minutes: i64) {
    let due = (support::now_local() + chrono::Duration::minutes(minutes)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] {title} due: {due}\n")).unwrap();
}

#[test]
fn the_terminal_steers_reminders_and_feedback_with_no_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let config = "[gateway]\nlisten = \"127.0.0.1:0\"\n[policy]\nsession_cooldown_minutes = 0\n\
                  [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    let up = support::Killed(support::up(dir, config, &[]));
    support::wait_ready(dir);
    let t = Tmux::new("week");
    t.start(&format!("{} --data-dir {} repl", support::raven_bin().display(), dir.display()));
    t.wait_for(&format!("attached to the supervisor (pid {})", up.0.id()));

    t.send("/start");
    t.wait_for("Hello! I'm Raven.");
    t.send("/remind in 2h call the dentist");
    let screen = t.wait_for("Id: ");
    let set = screen.lines().skip_while(|l| !l.contains("call the dentist")).collect::<Vec<_>>().join("\n");
    assert!(set.contains("When:"), "{screen}");
    let id = screen.split("Id: ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    t.send("/remind every weekday at 8:30 standup");
    t.wait_for("When: every weekday at 08:30");
    t.send("/list");
    let screen = || t.run(&["capture-pane", "-t", "t", "-p", "-J"]);
    // The confirmation names the id twice (its Id and its /cancel), the list once more.
    support::eventually("the list", || screen().matches(&id).count() >= 3);
    assert!(screen().lines().any(|l| l.contains(&id) && l.contains("call the dentist")), "{}", screen());
    assert!(screen().matches("standup").count() >= 3, "typed, confirmed and listed: {}", screen());
    t.send(&format!("/cancel {id}"));
    t.wait_for(&format!("Cancelled {id}"));
    assert!(!ok(dir, &["cron", "list"]).contains(&id), "gone from the jobs too");

    // /later on a nudge: not a rating; the message comes again, as a job the user sees.
    note(dir, "Call the bank", 20);
    t.send("/tick");
    t.wait_for("Call the bank is due");
    t.send("/later");
    t.wait_for("Later, then: I'll send it again ");
    assert!(ok(dir, &["cron", "list"]).contains("Call the bank"));

    // A nudge, then a cron reminder: /stop means the nudge, and mutes its topic.
    note(dir, "Pay the rent", 25);
    t.send("/tick");
    t.wait_for("Pay the rent is due");
    ok(dir, &["cron", "add", "--in", "1s", "--to", "cli:local", "Drink some water"]);
    t.wait_for("Drink some water\n");
    t.send("/stop");
    let screen = t.wait_for("To undo: /ok rent");
    assert!(screen.contains("as a stop"), "{screen}");
    let explain = ok(dir, &["policy", "explain", "--content", "Pay the rent", "--priority", "high"]);
    assert!(explain.contains("topic `rent` muted by the user until"), "{explain}");
    t.send("/quit");

    support::week::later_and_stop_are_told(dir);
}
