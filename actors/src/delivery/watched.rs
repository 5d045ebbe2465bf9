//! Delivery honesty: a message for the terminal (`cli`) counts as delivered only when someone
//! can see it: a REPL attached, or a terminal on the process's stdout, or
//! `[delivery] cli_always = true` (also `RAVEN_CLI_ALWAYS=1`, for scripts that read stdout).
//! Otherwise it goes to the user's first enabled chat channel (`[channels.*]`); with none, it
//! waits in the outbox (with its lifetime) until someone watches, or until a channel is set up
//! (the outbox's retries route it there).

use super::outlets::{Outlet, OutletError};
use raven_proto::OutboundText;
use std::collections::HashMap;
use std::sync::Arc;

/// The environment switch that does what `cli_always` does.
pub const CLI_ALWAYS_ENV: &str = "RAVEN_CLI_ALWAYS";

/// What the outbox says of a message that waits for someone to watch.
pub const NO_ONE_WATCHES: &str = "no one is watching the terminal (no REPL attached, stdout not a terminal) \
     and no chat channel is set up: it waits for `raven repl`, or add a channel ([channels.telegram] and the \
     others, see docs/channels.md)";

/// Where a message for an unwatched terminal goes instead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Watched {
    /// The terminal counts whether or not anyone watches it.
    pub cli_always: bool,
    /// `channel:chat_id` of the user's first enabled chat channel.
    pub fallback: Option<String>,
}

impl Watched {
    pub fn of(config: &crate::config::RavenConfig) -> Self {
        let env = std::env::var(CLI_ALWAYS_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
        Watched { cli_always: config.delivery.cli_always || env, fallback: config.channels.first_home() }
    }

    /// Whether `text` is for a terminal no one can see.
    pub fn unseen(&self, text: &OutboundText, outlet: Option<&Arc<dyn Outlet>>) -> bool {
        !self.cli_always && text.channel == "cli" && outlet.is_some_and(|o| !o.seen())
    }

    /// Whether a message for an unwatched terminal goes to one of `channels`.
    pub fn falls_back_to_one_of(&self, channels: &[String]) -> bool {
        let fallback = self.fallback.as_deref().map(raven_proto::split_target);
        !self.cli_always && fallback.is_some_and(|(channel, _)| channels.contains(&channel))
    }

    /// `text` and its outlet, or, for an unwatched terminal, the fallback channel's; with no
    /// fallback, the failure that keeps it waiting.
    pub fn route(
        &self,
        mut text: OutboundText,
        outlets: &HashMap<String, Arc<dyn Outlet>>,
    ) -> (OutboundText, Result<Option<Arc<dyn Outlet>>, OutletError>) {
        let outlet = outlets.get(&text.channel).cloned();
        if !self.unseen(&text, outlet.as_ref()) {
            return (text, Ok(outlet));
        }
        let Some(target) = &self.fallback else {
            return (text, Err(OutletError::Transient(NO_ONE_WATCHES.into())));
        };
        let (channel, chat) = raven_proto::split_target(target);
        tracing::info!(delivery = %text.delivery_id, "no one watches the terminal; sent to {target} instead");
        text.channel = channel;
        text.chat_id = chat;
        let outlet = outlets.get(&text.channel).cloned();
        (text, Ok(outlet))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::outlets::CliOutlet;

    fn outlets() -> HashMap<String, Arc<dyn Outlet>> {
        // No REPL subscribed to the bus, nothing else: no one watches.
        let cli: Arc<dyn Outlet> = Arc::new(CliOutlet::events_only(crate::ipc::EventBus::default()));
        HashMap::from([("cli".to_owned(), cli)])
    }

    #[test]
    fn an_unwatched_terminal_sends_to_the_first_channel_or_keeps_the_message_waiting() {
        let text = OutboundText::proactive("d1", "cli", "local", "Call the bank");
        let (t, o) =
            Watched { cli_always: false, fallback: Some("telegram:42".into()) }.route(text.clone(), &outlets());
        assert_eq!((t.channel.as_str(), t.chat_id.as_str()), ("telegram", "42"));
        assert!(matches!(o, Ok(None)), "no telegram outlet in this test: it waits for one");

        let (t, o) = Watched::default().route(text.clone(), &outlets());
        assert_eq!(t.channel, "cli");
        assert!(matches!(o, Err(OutletError::Transient(ref why)) if why.contains("no one is watching")));

        let (t, o) = Watched { cli_always: true, fallback: Some("telegram:42".into()) }.route(text, &outlets());
        assert_eq!(t.channel, "cli");
        assert!(matches!(o, Ok(Some(_))));
    }
}
