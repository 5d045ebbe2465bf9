//! The `raven` binary as a user runs it: `config show` and `policy explain`.

use chrono::{Duration, TimeZone, Utc};
use raven_actors::policy::{NudgePolicy, PolicyState};
use raven_actors::store::JsonStateStore;
use raven_proto::{Action, Priority};
use std::process::{Command, Output};

fn raven(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raven"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("RAVEN_HOME")
        // The tests say their zone: the machine's own must not change what they see.
        .env("TZ", "UTC")
        // The terminal's messages are read from a pipe here: they count as seen.
        .env("RAVEN_CLI_ALWAYS", "1")
        .output()
        .expect("run raven")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn config_show_names_the_origin_of_each_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[policy]\nmax_per_day = 3\n").unwrap();
    let out = raven(dir.path(), &["config", "show"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let file = dir.path().join("config.toml").display().to_string();
    let day = stdout.lines().find(|l| l.starts_with("policy.max_per_day")).unwrap();
    assert!(day.contains("= 3") && day.contains(&file), "{day}");
    let quiet = stdout.lines().find(|l| l.starts_with("policy.quiet_hours.start")).unwrap();
    assert!(quiet.contains("\"23:00\"") && quiet.ends_with("# default"), "{quiet}");
}

#[test]
fn a_bad_key_is_a_clear_error_naming_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[policy]\nquiet_hourz = 1\n").unwrap();
    let out = raven(dir.path(), &["config", "show"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("quiet_hourz"), "{err}");
    assert!(err.contains(&dir.path().join("config.toml").display().to_string()), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn policy_explain_reads_the_ledger_in_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let noon = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    // Eight distinct nudges this morning fill the day quota.
    let mut p = NudgePolicy::new(Default::default(), chrono_tz::Tz::UTC);
    for i in 0..8 {
        let content = format!("errand number {i} {}", "z".repeat(i + 4));
        p.record_fired(
            Action::Nudge,
            Some(&format!("s:{i}")),
            &content,
            Priority::Low,
            Some(&format!("t{i}")),
            noon - Duration::hours(11 - i as i64),
        );
    }
    let state = p.state().clone();
    JsonStateStore::new(dir.path().join("sentinel/state.json"))
        .update("policy", |s: &mut PolicyState| *s = state)
        .unwrap();

    let out = raven(
        dir.path(),
        &["policy", "explain", "--content", "Drink water", "--session", "cli:1", "--at", "2026-03-02T12:00:00Z"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("verdict: deny at layer 4 (day_quota): 8 of 8 nudges sent today"), "{stdout}");
    assert!(stdout.contains("(8 fires on record)"), "{stdout}");

    // High priority does not bypass the day quota; a spawn has its own line.
    let out = raven(
        dir.path(),
        &["policy", "explain", "--content", "Drink water", "--priority", "high", "--at", "2026-03-02T12:00:00Z"],
    );
    assert!(text(&out.stdout).starts_with("verdict: deny at layer 4"), "{}", text(&out.stdout));
    let out = raven(
        dir.path(),
        &["policy", "explain", "--action", "spawn-agent", "--content", "Weekly digest", "--at", "2026-03-02T12:00:00Z"],
    );
    assert!(text(&out.stdout).starts_with("verdict: allow"), "{}", text(&out.stdout));
}

#[test]
fn policy_explain_at_night_names_quiet_hours_and_the_bypass() {
    let dir = tempfile::tempdir().unwrap();
    let night = ["policy", "explain", "--content", "Drink water", "--at", "2026-03-02T23:30:00Z"];
    let out = raven(dir.path(), &night);
    assert!(text(&out.stdout).starts_with("verdict: deny at layer 2 (quiet_hours)"), "{}", text(&out.stdout));
    let mut high = night.to_vec();
    high.extend(["--priority", "high"]);
    let out = raven(dir.path(), &high);
    assert!(
        text(&out.stdout).starts_with("verdict: allow (high priority bypassed quiet_hours)"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_bad_time_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = raven(dir.path(), &["policy", "explain", "--content", "x", "--at", "blursday at noonish"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("`blursday at noonish`") && err.contains("RFC 3339"), "quotes it and lists the forms: {err}");
}

#[test]
fn tick_delivers_an_imminent_deadline_to_the_terminal_with_the_rules_provider() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
    std::fs::write(dir.path().join("workspace/MEMORY.md"), "- [ ] Call the bank due: 2026-03-02 12:30\n").unwrap();
    let out = raven(dir.path(), &["tick", "--at", "2026-03-02T12:00:00Z", "--metrics"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("] Reminder: Call the bank is due at 12:30.") && stdout.contains("[raven ⏰ "), "{stdout}");
    assert!(stdout.contains("route:    nudge"), "{stdout}");
    assert!(stdout.contains("provider: rules"), "{stdout}");
    for actor in
        ["NudgePolicy", "Planner", "ContextAssembler", "SentinelRunner", "DeliveryHub", "NudgeInjector", "DeferManager"]
    {
        assert!(stdout.contains(actor), "{actor} missing: {stdout}");
    }
    // `--at` is a dry run: no fire is in the ledger, so the same tick again nudges again,
    // and nothing was written to the data dir.
    assert!(stdout.starts_with("dry run (nothing is saved)\n"), "{stdout}");
    let out = raven(dir.path(), &["tick", "--at", "2026-03-02T12:05:00Z"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("route:    nudge\n"), "{stdout}");
    assert!(!dir.path().join("user_memory/attention.md").exists());
    assert!(!dir.path().join("sentinel").exists());
}

#[test]
fn tick_in_quiet_hours_takes_the_fast_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = raven(dir.path(), &["tick", "--at", "2026-03-02T23:30:00Z"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("route:    fast_path_skip"), "{}", text(&out.stdout));
}

#[test]
fn tick_delivers_through_the_configured_jsonl_outlet_and_retries_the_outbox() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
    std::fs::write(dir.path().join("workspace/MEMORY.md"), "- [ ] Call the bank due: 2026-03-02 12:30\n").unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        "[delivery]\njsonl_path = \"out/deliveries.jsonl\"\ndefault_targets = [\"jsonl:me\"]\noutbox_backoff_s = 1\n",
    )
    .unwrap();
    // A dry run delivers to the outlet of its private copy: the real file is not written.
    let out = raven(dir.path(), &["tick", "--at", "2026-03-02T12:00:00Z"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("result:   delivered to jsonl:me"), "{stdout}");
    assert!(!dir.path().join("out").exists(), "{stdout}");
    // `out` is a file: the outlet fails, the message waits in the outbox.
    std::fs::write(dir.path().join("out"), "").unwrap();
    let sent = raven(dir.path(), &["send", "jsonl:me", "Call the bank"]);
    assert!(text(&sent.stderr).contains("outbox"), "{}", text(&sent.stderr));
    std::fs::remove_file(dir.path().join("out")).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    // Past the retry's backoff, a tick retries the outbox first.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = raven(dir.path(), &["tick"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("outbox:   1 delivered, 0 still queued"), "{stdout}");
    let delivered = std::fs::read_to_string(dir.path().join("out/deliveries.jsonl")).unwrap();
    assert_eq!(delivered.lines().count(), 1, "{delivered}");
    assert!(delivered.contains("Call the bank"));
}

#[test]
fn say_with_no_llm_creates_reminders_and_answers_honestly() {
    let dir = tempfile::tempdir().unwrap();
    let before = Utc::now();
    let out = raven(dir.path(), &["say", "/remind in 10m stretch your legs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("Reminder set: “stretch your legs”"), "{}", text(&out.stdout));
    let after = Utc::now();
    let out = raven(dir.path(), &["say", "/remind at 18:30 call mum"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // `--at` is a dry run: the reply is shown, the job is not kept.
    let out = raven(dir.path(), &["say", "/remind in 1h tea", "--at", "2026-03-02T12:00:00Z"]);
    assert!(text(&out.stdout).starts_with("dry run (nothing is saved)\nReminder set: “tea”"), "{}", text(&out.stdout));
    let jobs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cron/jobs.json")).unwrap()).unwrap();
    let jobs = jobs["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["message"], "stretch your legs");
    let at: chrono::DateTime<Utc> = jobs[0]["schedule"]["at"].as_str().unwrap().parse().unwrap();
    let (earliest, latest) = (before + Duration::minutes(10), after + Duration::minutes(10));
    assert!(at >= earliest - Duration::seconds(1) && at <= latest, "{at} not 10 minutes after the say");
    assert!(jobs[1]["schedule"]["at"].as_str().unwrap().ends_with("T18:30:00Z"), "{}", jobs[1]);
    assert_eq!(jobs[1]["target"], "cli:local");
    // A reminder refused is said on stderr, with exit 2, and nothing is kept.
    let out = raven(dir.path(), &["say", "/remind sometime tea"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("I could not read the time"), "{}", text(&out.stderr));
    let out = raven(dir.path(), &["say", "how are you?"]);
    assert!(text(&out.stdout).contains("No language model is configured"), "{}", text(&out.stdout));
    // The conversation was kept as a session: the question and its answer (a command answered
    // before any model is not part of the conversation).
    let session = std::fs::read_to_string(dir.path().join("sessions/cli_local.jsonl")).unwrap();
    assert_eq!(session.lines().count(), 2, "{session}");
}

#[test]
fn send_delivers_through_the_outlet_and_says_when_it_could_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[delivery]\njsonl_path = \"out.jsonl\"\n").unwrap();
    let out = raven(dir.path(), &["send", "jsonl:me", "The parcel is at the door"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("delivered to jsonl:me"));
    let written = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(written.contains("The parcel is at the door") && written.contains("\"chat_id\":\"me\""), "{written}");
    let bad = raven(dir.path(), &["send", "nochat", "x"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("not channel:chat_id"), "{}", text(&bad.stderr));
    // A channel with no outlet is refused when given, not queued to be retried for ever.
    let nowhere = raven(dir.path(), &["send", "telegram:42", "hello"]);
    assert_eq!(nowhere.status.code(), Some(2));
    let said = text(&nowhere.stderr);
    assert!(said.contains("no outlet delivers to channel `telegram`") && said.contains("cli, jsonl"), "{said}");
    let cron = raven(dir.path(), &["cron", "add", "--in", "1h", "--to", "telegarm:42", "typo"]);
    assert_eq!(cron.status.code(), Some(2));
    assert!(text(&cron.stderr).contains("`telegarm`"), "{}", text(&cron.stderr));
    let cron = raven(dir.path(), &["cron", "add", "--in", "1h", "--broadcast", "jsonl:me,sms:1", "typo"]);
    assert!(text(&cron.stderr).contains("`sms`"), "{}", text(&cron.stderr));
    assert!(text(&raven(dir.path(), &["cron", "list"]).stdout).contains("no jobs"), "nothing was added");
    assert!(text(&raven(dir.path(), &["outbox"]).stdout).starts_with("0 waiting"), "nothing waits");
}

#[test]
fn cron_add_list_rm_round_trip_and_bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let add = raven(dir.path(), &["cron", "add", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "Water the plants"]);
    assert!(add.status.success(), "{}", text(&add.stderr));
    let id = text(&add.stdout).split_whitespace().next().unwrap().to_owned();
    let list = text(&raven(dir.path(), &["cron", "list"]).stdout);
    assert!(
        list.contains(&id) && list.contains("every day at 02:30 (Europe/Berlin)") && list.contains("next "),
        "{list}"
    );
    for (args, says) in [
        (vec!["cron", "add", "--in", "soon", "x"], "`soon`"),
        (vec!["cron", "add", "--cron", "* * *", "x"], "`* * *`"),
        (vec!["cron", "add", "--in", "99999999999999d", "x"], "`99999999999999d` is out of range"),
        (vec!["cron", "add", "--every", "18446744073709551615s", "x"], "`every 18446744073709551615s` is out of range"),
        (vec!["cron", "add", "--at", "2020-01-01 09:00", "x"], "is in the past"),
        (vec!["cron", "add", "--cron", "0 9 * * *", "--tz", "Mars/Base", "x"], "not an IANA time zone"),
        (vec!["cron", "add", "x"], "say when"),
        (vec!["cron", "rm", "job-nope"], "no job job-nope"),
    ] {
        let out = raven(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(says), "{args:?}: {}", text(&out.stderr));
    }
    // Times as people say them, in every form, with --tz for each.
    for args in [
        vec!["--at", "6pm"],
        vec!["--cron", "@daily"],
        vec!["--every", "weekday at 9"],
        vec!["--in", "1h 30m"],
        vec!["--at", "tomorrow at 9", "--tz", "Asia/Tokyo"],
    ] {
        let mut all = vec!["cron", "add", "Natural"];
        all.extend(args.iter());
        let out = raven(dir.path(), &all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let rm = raven(dir.path(), &["cron", "rm", &id]);
    assert!(rm.status.success() && text(&rm.stdout).contains("removed"));
    assert_eq!(text(&raven(dir.path(), &["cron", "list"]).stdout).matches("Natural").count(), 5);
}
