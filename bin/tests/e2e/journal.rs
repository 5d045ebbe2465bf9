//! The decision journal from outside, with no LLM: a deadline nudged by one tick, then
//! accepted, and the heads-up of a later one held back by the gate on the next tick (the
//! session's cooldown), are told by `raven log` (the denial with its
//! layer, the delivery with its target, the verdict), `raven log --json` (each line JSON) and
//! `raven why <short id>` (that message's story).

use crate::support;

use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// No quiet hours (the test runs on the real clock), a deadline due in 20 minutes (reminded
/// by the first tick) and one in 70 (its heads-up, proposed by the second, is held back).
fn data_dir(dir: &Path) {
    let config = "[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    support::write_config(dir, config);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = |m: i64| (support::now_local() + chrono::Duration::minutes(m)).format("%Y-%m-%d %H:%M");
    let memory = format!("- [ ] Call the bank due: {}\n- [ ] Pay the rent due: {}\n", due(20), due(70));
    std::fs::write(dir.join("workspace/MEMORY.md"), memory).unwrap();
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = support::raven(dir, args);
    assert!(out.status.success(), "raven {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The short id the cli outlet shows beside the nudge.
fn short_id(stdout: &str) -> String {
    let line = stdout.lines().find(|l| l.starts_with("[raven ⏰ ")).unwrap_or_else(|| panic!("{stdout}"));
    line["[raven ⏰ ".len()..line.find(']').unwrap()].to_owned()
}

#[test]
fn the_journal_tells_why_a_nudge_went_out_why_the_next_was_held_back_and_how_it_landed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let missing = support::raven(dir, &["log"]);
    assert!(missing.status.success() && missing.stdout.is_empty(), "{}", text(&missing.stderr));

    let short = short_id(&ok(dir, &["tick"]));
    let second = ok(dir, &["tick"]);
    assert!(!second.contains("[raven ⏰ "), "the gate holds the second back: {second}");
    ok(dir, &["feedback", &short, "accepted"]);

    let log = ok(dir, &["log"]);
    assert!(log.lines().any(|l| l.contains(" gate ") && l.contains("deny at layer ")), "{log}");
    let delivery = format!("[{short}] bank → cli:local");
    assert!(log.lines().any(|l| l.contains(" delivery ") && l.contains(&delivery)), "{log}");
    assert!(log.lines().any(|l| l.contains(" verdict ") && l.contains(&format!("[{short}] accepted"))), "{log}");
    assert!(log.lines().any(|l| l.contains(" tick ") && l.contains("delivered")), "{log}");

    let json = ok(dir, &["log", "--json"]);
    let lines: Vec<serde_json::Value> = json.lines().map(|l| serde_json::from_str(l).expect(l)).collect();
    let denial = lines.iter().find(|l| l["kind"] == "gate" && l["allow"] == false).expect(&json);
    assert!(denial["layer"].is_string() && denial["layer_name"].is_string() && denial["reason"].is_string());
    assert!(lines.iter().all(|l| l["at"].as_str().is_some_and(|at| at.ends_with('Z'))), "{json}");
    assert!(ok(dir, &["log", "--since", "1h"]).contains(&delivery));
    assert!(ok(dir, &["log", "--since", "2099-01-01 00:00"]).is_empty());

    let why = ok(dir, &["why", &short]);
    let order: Vec<usize> = [" delivery ", " tick ", " verdict "]
        .iter()
        .map(|k| why.lines().position(|l| l.contains(k)).unwrap_or_else(|| panic!("{k} in {why}")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "in time order: {why}");
    assert!(!why.contains(" gate "), "only the lines of that message: {why}");
    let unknown = support::raven(dir, &["why", "nothing-like-it"]);
    assert!(!unknown.status.success());
}

/// `raven discover` against a running supervisor prints the outcome the run reached: here
/// the gate's denial, with its layer; and the journal keeps it as a `discovery` line. The
/// daily menu is off: a run the user asks for runs all the same.
#[test]
fn discover_prints_the_outcome_the_supervisor_reached_with_its_layer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (support::now_local() + chrono::Duration::hours(3)).format("%Y-%m-%d %H:%M");
    std::fs::write(dir.join("workspace/MEMORY.md"), format!("- [ ] Renew the passport due: {due}\n")).unwrap();
    let config = "[gateway]\nenabled = false\n[policy]\nmax_per_day = 0\n[sentinel]\ntrigger_poll_s = 1\n\
                  [policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n[discovery]\nenabled = false\n";
    let _up = support::Killed(support::up(dir, config, &[]));
    support::wait_ready(dir);
    let said = ok(dir, &["discover", "--wait", "30"]);
    let outcome = said.lines().find(|l| l.contains(" discovery ")).unwrap_or_else(|| panic!("{said}"));
    assert!(outcome.contains("denied — layer 4") && outcome.contains("(requested)"), "{said}");
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let line = journal.lines().find(|l| l.contains("\"kind\":\"discovery\"")).expect("a discovery line");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!((v["outcome"].as_str(), v["requested"].as_bool()), (Some("denied"), Some(true)), "{line}");
}

/// `raven tick` against a running supervisor prints the decision and what became of it: the
/// second tick's heads-up, held back by the gate, names the layer and the reason.
#[test]
fn a_supervisor_tick_prints_the_outcome_with_its_layer_and_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    data_dir(dir);
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap() + "[gateway]\nenabled = false\n";
    let _up = support::Killed(support::up(dir, &config, &[]));
    support::wait_ready(dir);
    let first = ok(dir, &["tick"]);
    assert!(first.contains("(the supervisor's tick)") && first.contains("result:   delivered to cli:local"), "{first}");
    let second = ok(dir, &["tick"]);
    let result = second.lines().find(|l| l.starts_with("result:")).unwrap_or_else(|| panic!("{second}"));
    assert!(result.contains("not delivered: denied at layer "), "{second}");
    assert!(second.lines().any(|l| l.starts_with("decision: nudge")), "{second}");
}

/// In the user's zone (Asia/Kolkata, UTC+05:30, not the machine's UTC), by topic, and with
/// the escape sequences of the user's own text kept off the terminal: `raven tick`, `raven
/// log` and `raven why <topic>`.
#[test]
fn log_and_why_speak_the_users_zone_find_a_topic_and_keep_escapes_off_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tz = chrono_tz::Asia::Kolkata;
    let config = "[general]\ntimezone = \"Asia/Kolkata\"\n[policy.quiet_hours]\nstart = \"00:00\"\nend = \"00:00\"\n";
    support::write_config(dir, config);
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let due = (chrono::Utc::now() + chrono::Duration::minutes(20)).with_timezone(&tz).format("%Y-%m-%d %H:%M");
    let later = (chrono::Utc::now() + chrono::Duration::minutes(70)).with_timezone(&tz).format("%Y-%m-%d %H:%M");
    let memory =
        format!("- [ ] Call the bank \x1b[31mnow\x1b[0m \x1b]0;x\x07due: {due}\n- [ ] Pay the rent due: {later}\n");
    std::fs::write(dir.join("workspace/MEMORY.md"), memory).unwrap();
    let before = chrono::Utc::now().with_timezone(&tz);
    let tick = ok(dir, &["tick"]);
    let after = chrono::Utc::now().with_timezone(&tz);
    assert!(tick.contains("[raven ⏰ ") && !tick.contains('\x1b') && !tick.contains('\x07'), "{tick:?}");
    ok(dir, &["tick"]);

    let log = ok(dir, &["log"]);
    assert!(!log.contains('\x1b') && !log.contains('\x07'), "{log:?}");
    let times = [before.format("%H:%M").to_string(), after.format("%H:%M").to_string()];
    let delivery = log.lines().find(|l| l.contains(" delivery ")).unwrap_or_else(|| panic!("{log}"));
    assert!(times.iter().any(|t| delivery.starts_with(t.as_str())), "local time {times:?}: {log}");
    assert!(log.contains(&format!("── {} ──", before.format("%a %Y-%m-%d"))), "{log}");

    assert!(delivery.contains("] bank → cli:local"), "{delivery}");
    let why = ok(dir, &["why", "bank"]);
    assert!(why.lines().any(|l| l.contains(" delivery ")), "{why}");
    assert!(!why.contains('\x1b'), "{why:?}");
    let why = ok(dir, &["why", "rent"]);
    assert!(
        why.lines().any(|l| l.contains(" gate ") && l.contains("deny at layer 6")),
        "the held-back heads-up: {why}"
    );
}
