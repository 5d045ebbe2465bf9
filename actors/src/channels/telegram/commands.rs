//! The command menu Telegram shows behind "/" (`setMyCommands`): the chat commands every
//! channel answers without a model. Set by `raven channels test telegram` (the setup's own
//! step), never by a running gateway, whose only requests are polls and messages: a Bot API
//! that refuses it or does not answer only costs the menu, and the commands work without it.

use super::Telegram;
use serde_json::{json, Value};
use std::time::Duration;

/// Each command and what the menu says of it.
const COMMANDS: [(&str, &str); 13] = [
    ("remind", "Set a reminder: /remind tomorrow at 9 dentist"),
    ("list", "Your reminders, soonest first"),
    ("cancel", "Remove a reminder: /cancel <id>"),
    ("pause", "Pause a reminder: /pause <id>"),
    ("resume", "Resume a reminder: /resume <id>"),
    ("ok", "That was useful"),
    ("stop", "Not this topic for a while"),
    ("later", "Send the last message again later"),
    ("earlier", "That came too late: tell me of such things earlier"),
    ("snooze", "Nothing proactive for a while: /snooze 2h"),
    ("why", "What I decided lately, and why"),
    ("help", "What I do and these commands"),
    ("start", "Hello, and these commands"),
];

/// How long the registration may take.
const WITHIN: Duration = Duration::from_secs(20);

impl Telegram {
    /// Sets [`COMMANDS`] as the bot's menu; why not, when it was not.
    // A `String` error: a line of the gateway's log, for a person.
    pub(super) async fn offer_commands(&self) -> Result<(), String> {
        let commands: Vec<Value> = COMMANDS.iter().map(|(c, d)| json!({"command": c, "description": d})).collect();
        match tokio::time::timeout(WITHIN, self.api.call("setMyCommands", &json!({ "commands": commands }))).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} s", WITHIN.as_secs())),
        }
    }
}
