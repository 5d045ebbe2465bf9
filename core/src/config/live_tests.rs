use super::*;

const START: &str = "[general]\ntimezone = \"Europe/Paris\"\n[cron]\nforward_channels = []\n\
                     [delivery]\njsonl_path = \"out.jsonl\"\n";

fn live_from(dir: &Path, text: &str) -> LiveConfig {
    std::fs::write(dir.join("config.toml"), text).unwrap();
    LiveConfig::new(RavenConfig::load(&dir.join("config.toml")).unwrap().0)
}

fn rewrite(live: &LiveConfig, dir: &Path, text: &str) -> Result<Reload, ConfigError> {
    std::fs::write(dir.join("config.toml"), text).unwrap();
    live.reload(&dir.join("config.toml"))
}

#[test]
fn a_live_key_is_taken_and_a_restart_key_keeps_its_running_value() {
    let tmp = tempfile::tempdir().unwrap();
    let live = live_from(tmp.path(), START);
    let text = START
        .replace("Europe/Paris", "Asia/Tokyo")
        .replace("forward_channels = []", "forward_channels = [\"jsonl:me\"]")
        + "[policy]\nmax_per_hour = 1\n[sentinel]\nenabled = true\ninterval_s = 60\n";
    let reload = rewrite(&live, tmp.path(), &text).unwrap();
    assert_eq!(reload.needs_restart, vec!["general.timezone".to_owned()]);
    assert_eq!(
        reload.applied,
        vec!["cron.forward_channels", "policy.max_per_hour", "sentinel.enabled", "sentinel.interval_s"]
    );
    let now = live.get();
    assert!(now.sentinel.enabled, "the Sentinel tick is turned on without a restart");
    assert_eq!(now.cron.forward_channels, vec!["jsonl:me".to_owned()]);
    assert_eq!((now.policy.max_per_hour, now.sentinel.interval_s), (1, 60));
    assert_eq!(now.general.timezone, chrono_tz::Europe::Paris, "the zone needs a restart");
    assert!(rewrite(&live, tmp.path(), &text).unwrap().is_empty(), "told once, not at every save");
}

#[test]
fn a_file_that_does_not_parse_changes_nothing_and_is_reported_once() {
    let tmp = tempfile::tempdir().unwrap();
    let live = live_from(tmp.path(), START);
    let before = live.get();
    let broken = START.to_owned() + "[policy]\nmax_per_hour = \"many\"\n";
    let err = rewrite(&live, tmp.path(), &broken).unwrap_err();
    assert!(err.to_string().contains("max_per_hour"), "{err}");
    assert_eq!(*live.get(), *before, "the running config stays");
    assert_eq!(rewrite(&live, tmp.path(), &broken).unwrap(), Reload::default(), "the same error is not told twice");
    let fixed = START.to_owned() + "[policy]\nmax_per_hour = 1\n";
    assert_eq!(rewrite(&live, tmp.path(), &fixed).unwrap().applied, vec!["policy.max_per_hour"]);
    assert!(rewrite(&live, tmp.path(), &broken).is_err(), "broken again after a good file: told again");
}

#[test]
fn an_outlet_added_or_removed_needs_a_restart_but_a_new_path_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let live = live_from(tmp.path(), START);
    let moved = START.replace("out.jsonl", "elsewhere.jsonl");
    assert_eq!(rewrite(&live, tmp.path(), &moved).unwrap().applied, vec!["delivery.jsonl_path"]);
    assert_eq!(live.get().delivery.jsonl_path, "elsewhere.jsonl");
    let added =
        moved.clone() + "webhook_url = \"http://127.0.0.1:9/hook\"\ndefault_targets = [\"jsonl:me\"]\noutbox_max = 5\ncli_always = true\n";
    let reload = rewrite(&live, tmp.path(), &added).unwrap();
    assert_eq!(reload.needs_restart, vec!["delivery.cli_always", "delivery.outbox_max", "delivery.webhook_url"]);
    assert_eq!(reload.applied, vec!["delivery.default_targets"]);
    let now = live.get();
    assert_eq!((now.delivery.webhook_url.as_str(), now.delivery.outbox_max), ("", 10_000));
    assert!(!now.delivery.cli_always, "the hub was built with the running value");
    assert_eq!(now.delivery.default_targets, vec!["jsonl:me".to_owned()]);
}

#[test]
fn an_unchanged_file_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let live = live_from(tmp.path(), START);
    let before = live.get();
    assert!(rewrite(&live, tmp.path(), START).unwrap().is_empty());
    assert!(Arc::ptr_eq(&before, &live.get()), "not even replaced");
}
