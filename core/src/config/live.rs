//! The config a running process uses, re-read when `config.toml` changes. What can change
//! at run time (the policy, `cron.forward_channels`, `[delivery]`, `sentinel.enabled` and
//! `sentinel.interval_s`) is
//! taken from the new file and used at its next use; every other changed key is named as
//! needing a restart and keeps its running value; a file that does not parse changes nothing.

use super::{ConfigError, DeliveryConfig, RavenConfig};
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

/// The keys (and key prefixes, before a `.`) that apply without a restart.
const LIVE: &[&str] = &["policy", "cron.forward_channels", "sentinel.enabled", "sentinel.interval_s", "delivery"];

/// Delivery keys that add or remove an outlet when they go from empty to set (or back): the
/// channels a process serves are fixed at its start.
const CHANNEL_KEYS: &[&str] = &["delivery.jsonl_path", "delivery.webhook_url"];

/// Delivery keys read once, by the outbox and its retry loop.
const RESTART_DELIVERY: &[&str] =
    &["delivery.outbox_backoff_s", "delivery.outbox_ttl_nudge_h", "delivery.outbox_max", "delivery.cli_always"];

/// What one reload did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reload {
    /// Changed keys now in use, as dotted paths (`cron.forward_channels`).
    pub applied: Vec<String>,
    /// Changed keys that keep their running value until the next start.
    pub needs_restart: Vec<String>,
}

impl Reload {
    pub fn is_empty(&self) -> bool {
        self.applied.is_empty() && self.needs_restart.is_empty()
    }

    /// Whether any applied key is `section` or lies under it.
    pub fn touches(&self, section: &str) -> bool {
        self.applied.iter().any(|k| under(k, section))
    }
}

/// The running config, shared by every part that reads a live key at its next use. Clones
/// share one config.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    current: Arc<RwLock<Arc<RavenConfig>>>,
    /// The last parse error reported, so an editor's repeated saves of one broken file warn
    /// once.
    last_error: Arc<Mutex<Option<String>>>,
    /// The keys last reported as needing a restart: the events of one save, or a later save
    /// that changes nothing live, do not report them again.
    last_restart: Arc<Mutex<Vec<String>>>,
}

impl LiveConfig {
    pub fn new(config: RavenConfig) -> Self {
        LiveConfig {
            current: Arc::new(RwLock::new(Arc::new(config))),
            last_error: Default::default(),
            last_restart: Default::default(),
        }
    }

    /// The config as it stands now.
    pub fn get(&self) -> Arc<RavenConfig> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reads `path` again and takes its live keys. On an error the running config stays;
    /// the error is returned once per distinct message (`Ok` with nothing changed after).
    pub fn reload(&self, path: &Path) -> Result<Reload, ConfigError> {
        let loaded = RavenConfig::load(path).map(|(c, _)| c);
        let new = match loaded {
            Ok(new) => new,
            Err(e) => return self.first_report(e),
        };
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let old = self.get();
        let (next, reload) = merge(&old, &new);
        if !reload.applied.is_empty() {
            *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(next);
        }
        let mut told = self.last_restart.lock().unwrap_or_else(|p| p.into_inner());
        if reload.applied.is_empty() && reload.needs_restart == *told {
            return Ok(Reload::default());
        }
        told.clone_from(&reload.needs_restart);
        Ok(reload)
    }

    fn first_report(&self, e: ConfigError) -> Result<Reload, ConfigError> {
        let mut last = self.last_error.lock().unwrap_or_else(|p| p.into_inner());
        let text = e.to_string();
        if last.as_deref() == Some(text.as_str()) {
            return Ok(Reload::default());
        }
        *last = Some(text);
        Err(e)
    }
}

/// The running config with the live keys of `new`, and what changed.
fn merge(old: &RavenConfig, new: &RavenConfig) -> (RavenConfig, Reload) {
    let mut reload = Reload::default();
    for key in changed_keys(old, new) {
        let live = LIVE.iter().any(|l| under(&key, l))
            && !RESTART_DELIVERY.contains(&key.as_str())
            && !adds_or_removes_a_channel(&key, old, new);
        if live {
            reload.applied.push(key);
        } else {
            reload.needs_restart.push(key);
        }
    }
    let mut next = old.clone();
    take_live_keys(&mut next, new, &reload);
    (next, reload)
}

fn take_live_keys(next: &mut RavenConfig, new: &RavenConfig, reload: &Reload) {
    if reload.touches("policy") {
        next.policy = new.policy.clone();
    }
    if reload.touches("cron.forward_channels") {
        next.cron.forward_channels = new.cron.forward_channels.clone();
    }
    if reload.touches("sentinel.interval_s") {
        next.sentinel.interval_s = new.sentinel.interval_s;
    }
    if reload.touches("sentinel.enabled") {
        next.sentinel.enabled = new.sentinel.enabled;
    }
    if reload.touches("delivery") {
        next.delivery = delivery_keeping(new, &next.delivery, &reload.needs_restart);
    }
}

/// The new `[delivery]`, with the running value of each key that needs a restart.
fn delivery_keeping(new: &RavenConfig, running: &DeliveryConfig, needs_restart: &[String]) -> DeliveryConfig {
    let mut d = new.delivery.clone();
    for key in needs_restart {
        match key.as_str() {
            "delivery.jsonl_path" => d.jsonl_path = running.jsonl_path.clone(),
            "delivery.webhook_url" => d.webhook_url = running.webhook_url.clone(),
            "delivery.outbox_backoff_s" => d.outbox_backoff_s = running.outbox_backoff_s,
            "delivery.outbox_ttl_nudge_h" => d.outbox_ttl_nudge_h = running.outbox_ttl_nudge_h,
            "delivery.outbox_max" => d.outbox_max = running.outbox_max,
            "delivery.cli_always" => d.cli_always = running.cli_always,
            _ => {}
        }
    }
    d
}

fn adds_or_removes_a_channel(key: &str, old: &RavenConfig, new: &RavenConfig) -> bool {
    let set = |c: &RavenConfig| match key {
        "delivery.jsonl_path" => !c.delivery.jsonl_path.trim().is_empty(),
        _ => !c.delivery.webhook_url.trim().is_empty(),
    };
    CHANNEL_KEYS.contains(&key) && set(old) != set(new)
}

/// `key` is `section` or a key under it.
fn under(key: &str, section: &str) -> bool {
    key == section || key.strip_prefix(section).is_some_and(|rest| rest.starts_with('.'))
}

/// Every leaf key whose value differs, as a dotted path.
fn changed_keys(old: &RavenConfig, new: &RavenConfig) -> Vec<String> {
    let as_value = |c: &RavenConfig| serde_json::to_value(c).unwrap_or(Value::Null);
    let mut out = Vec::new();
    diff("", &as_value(old), &as_value(new), &mut out);
    out
}

fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let child = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                diff(&child, x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), out);
            }
        }
        _ if a != b => out.push(path.to_owned()),
        _ => {}
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
