//! The command menu Telegram shows behind "/" (`setMyCommands`): the chat commands every
//! channel answers without a model. Registered once when the channel starts listening, beside
//! the first poll (never in its way): a Bot API that refuses it or does not answer only costs
//! the menu, and the commands work without it.

use super::Telegram;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Each command and what the menu says of it.
const COMMANDS: [(&str, &str); 11] = [
    ("remind", "Set a reminder: /remind tomorrow at 9 dentist"),
    ("list", "Your reminders, soonest first"),
    ("cancel", "Remove a reminder: /cancel <id>"),
    ("pause", "Pause a reminder: /pause <id>"),
    ("resume", "Resume a reminder: /resume <id>"),
    ("ok", "That was useful"),
    ("stop", "Not this topic for a while"),
    ("snooze", "Nothing proactive for a while: /snooze 2h"),
    ("why", "What I decided lately, and why"),
    ("help", "What I do and these commands"),
    ("start", "Hello, and these commands"),
];

/// How long the registration may take.
const WITHIN: Duration = Duration::from_secs(20);

impl Telegram {
    /// Registers [`COMMANDS`] once for this process.
    pub(super) async fn offer_commands(&self) {
        if self.commands_offered.swap(true, Ordering::Relaxed) {
            return;
        }
        let commands: Vec<Value> = COMMANDS.iter().map(|(c, d)| json!({"command": c, "description": d})).collect();
        match tokio::time::timeout(WITHIN, self.api.call("setMyCommands", &json!({ "commands": commands }))).await {
            Ok(Ok(_)) => tracing::debug!("telegram: the command menu is set"),
            Ok(Err(e)) => tracing::info!("telegram: the command menu was not set ({e}); the commands work without it"),
            Err(_) => tracing::info!("telegram: setMyCommands got no answer; the commands work without the menu"),
        }
    }
}
