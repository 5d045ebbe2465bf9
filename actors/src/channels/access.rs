//! Who may talk to the agent on a channel: only the configured senders (user ids, room ids,
//! addresses). Anything else is dropped and logged, never answered.

/// The senders a channel accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    channel: &'static str,
    senders: Vec<String>,
}

impl Allowed {
    pub fn new(channel: &'static str, senders: &[String]) -> Self {
        Allowed { channel, senders: senders.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect() }
    }

    /// Whether `sender` may talk to the agent; a stranger is logged (by id only: what they
    /// wrote is not kept).
    pub fn admits(&self, sender: &str) -> bool {
        let ok = self.senders.iter().any(|s| s == sender.trim());
        if !ok {
            tracing::warn!(channel = self.channel, sender, "a message from a sender not allowed was dropped");
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_configured_senders_are_admitted() {
        let a = Allowed::new("telegram", &["42".into(), " 7 ".into(), "".into()]);
        assert!(a.admits("42") && a.admits("7"));
        assert!(!a.admits("43") && !a.admits("") && !a.admits("4"));
        assert!(!Allowed::new("telegram", &[]).admits("42"));
    }
}
