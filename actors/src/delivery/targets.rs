//! The channels this data dir can deliver to: `cli`, and each outlet the config sets up
//! (`jsonl`, `webhook`). A target on any other channel (a typo in `--to`, a chat a model made
//! up) is refused when it is given, never queued to be retried for ever.

use crate::config::RavenConfig;

/// The channels of the configured outlets that face the outside (all but `cli`), and the
/// enabled chat channels (`[channels.*]`): what the gateway process hosts when it runs.
pub fn hosted_channels(config: &RavenConfig) -> Vec<String> {
    let d = &config.delivery;
    let mut out = Vec::new();
    if !d.jsonl_path.trim().is_empty() {
        out.push("jsonl".to_owned());
    }
    if !d.webhook_url.trim().is_empty() {
        out.push("webhook".to_owned());
    }
    out.extend(config.channels.enabled().into_iter().map(String::from));
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channels(Vec<String>);

/// A target on a channel no outlet of this data dir delivers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no outlet delivers to channel `{channel}` (in `{target}`); this data dir delivers to: {}", known.join(", "))]
pub struct TargetError {
    pub channel: String,
    pub target: String,
    pub known: Vec<String>,
}

impl Channels {
    /// What `config` sets up.
    pub fn of(config: &RavenConfig) -> Channels {
        let mut names = vec!["cli".to_owned()];
        names.extend(hosted_channels(config));
        Channels(names)
    }

    pub fn contains(&self, channel: &str) -> bool {
        self.0.iter().any(|c| c == channel)
    }

    /// `channel[:chat_id]` on a channel with an outlet, or why not.
    pub fn check(&self, target: &str) -> Result<(), TargetError> {
        let (channel, _) = raven_proto::split_target(target);
        if self.contains(&channel) {
            return Ok(());
        }
        Err(TargetError { channel, target: target.to_owned(), known: self.0.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_configured_channels_are_targets() {
        let mut config = RavenConfig::default();
        config.delivery.jsonl_path = "out.jsonl".into();
        let c = Channels::of(&config);
        assert!(c.check("cli:local").is_ok() && c.check("jsonl:me").is_ok() && c.check("jsonl").is_ok());
        let err = c.check("telegram:42").unwrap_err().to_string();
        assert!(err.contains("`telegram`") && err.contains("cli, jsonl"), "{err}");
        assert!(c.check("webhook:ann").is_err(), "no webhook_url set");
    }
}
