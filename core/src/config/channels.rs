//! `[channels.*]`: the chat apps and push services the gateway talks to the user through.
//! A channel is on when its table says `enabled = true`. Secrets are never keys of the file:
//! each names the environment variable that holds it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ChannelsConfig {
    pub telegram: TelegramConfig,
    pub matrix: MatrixConfig,
    pub ntfy: NtfyConfig,
    pub email: EmailConfig,
}

/// The longest a feedback link stays valid: a year.
pub const LINK_TTL_MAX_S: i64 = 365 * 24 * 3600;

/// The channel names, in the order a message for an unattended terminal tries them.
pub const CHANNEL_NAMES: [&str; 4] = ["telegram", "matrix", "ntfy", "email"];

impl ChannelsConfig {
    /// The enabled channels, in [`CHANNEL_NAMES`] order.
    pub fn enabled(&self) -> Vec<&'static str> {
        let on = [self.telegram.enabled, self.matrix.enabled, self.ntfy.enabled, self.email.enabled];
        CHANNEL_NAMES.iter().zip(on).filter(|(_, on)| *on).map(|(n, _)| *n).collect()
    }

    /// Where the user is reached on the first enabled channel, as `channel:chat_id`.
    pub fn first_home(&self) -> Option<String> {
        self.enabled().into_iter().find_map(|c| self.home(c).map(|chat| format!("{c}:{chat}")))
    }

    /// The user's own chat on `channel`: the first allowed Telegram user (a private chat has
    /// the user's id), the Matrix room, the ntfy topic, the email address.
    pub fn home(&self, channel: &str) -> Option<String> {
        let home = match channel {
            "telegram" => self.telegram.allowed_users.first().cloned(),
            "matrix" => Some(self.matrix.room_id.clone()),
            "ntfy" => Some(self.ntfy.topic.clone()),
            "email" => Some(self.email.to.clone()),
            _ => None,
        };
        home.filter(|h| !h.trim().is_empty())
    }

    /// What an enabled channel lacks, named by its key.
    // A `String` error: a range check's message, read by a person; ConfigError::Invalid names the file.
    pub fn check(&self) -> Result<(), String> {
        let missing = |on: bool, key: &str, v: &str| {
            (on && v.trim().is_empty()).then(|| format!("`channels.{key}` must be set when the channel is enabled"))
        };
        let t = &self.telegram;
        let (m, n, e) = (&self.matrix, &self.ntfy, &self.email);
        let gaps = [
            (t.enabled && t.allowed_users.is_empty())
                .then(|| "`channels.telegram.allowed_users` must name at least one user id".to_owned()),
            missing(m.enabled, "matrix.homeserver", &m.homeserver),
            missing(m.enabled, "matrix.room_id", &m.room_id),
            missing(m.enabled, "matrix.user_id", &m.user_id),
            missing(n.enabled, "ntfy.topic", &n.topic),
            missing(e.enabled, "email.smtp_host", &e.smtp_host),
            missing(e.enabled, "email.from", &e.from),
            missing(e.enabled, "email.to", &e.to),
        ];
        let bounds = [
            (!(1..=50).contains(&t.poll_timeout_s))
                .then(|| "`channels.telegram.poll_timeout_s` must be 1 to 50".to_owned()),
            (!(1..=120).contains(&m.sync_timeout_s))
                .then(|| "`channels.matrix.sync_timeout_s` must be 1 to 120".to_owned()),
            (m.enabled && m.allowed_users.is_empty())
                .then(|| "`channels.matrix.allowed_users` must name at least one user id".to_owned()),
            (!(60..=LINK_TTL_MAX_S).contains(&n.link_ttl_s))
                .then(|| format!("`channels.ntfy.link_ttl_s` must be 60 to {LINK_TTL_MAX_S} (a year)")),
            (!(1..=5).contains(&n.priority)).then(|| "`channels.ntfy.priority` must be 1 to 5".to_owned()),
            (!(1..=3600).contains(&n.poll_s)).then(|| "`channels.ntfy.poll_s` must be 1 to 3600 (seconds)".to_owned()),
            (e.enabled && e.timeout_s == 0).then(|| "`channels.email.timeout_s` must be at least 1".to_owned()),
        ];
        match gaps.into_iter().chain(bounds).flatten().next() {
            Some(gap) => Err(gap),
            None => Ok(()),
        }
    }
}

/// `[channels.telegram]`: a bot, long polling the Bot API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelegramConfig {
    pub enabled: bool,
    /// The variable holding the bot token (from @BotFather).
    pub token_env: String,
    /// The Bot API server (a self-hosted one, say).
    pub api_base: String,
    /// Telegram user ids allowed to talk to the agent; the first is where nudges go.
    pub allowed_users: Vec<String>,
    /// Seconds one `getUpdates` long poll waits for news.
    pub poll_timeout_s: u64,
    /// A `retry_after` longer than this is not waited out in place: the message goes back to
    /// the outbox.
    pub max_retry_after_s: u64,
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            enabled: false,
            token_env: "RAVEN_TELEGRAM_TOKEN".into(),
            api_base: "https://api.telegram.org".into(),
            allowed_users: Vec::new(),
            poll_timeout_s: 25,
            max_retry_after_s: 60,
        }
    }
}

/// `[channels.matrix]`: one room on a homeserver, through the client-server API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MatrixConfig {
    pub enabled: bool,
    /// `https://matrix.example.org`.
    pub homeserver: String,
    /// The bot's own user id, `@raven:example.org`.
    pub user_id: String,
    /// The variable holding the bot's access token; when it is empty, `password_env` logs in.
    pub access_token_env: String,
    pub password_env: String,
    /// The (unencrypted) room the user and the bot share.
    pub room_id: String,
    /// Matrix user ids allowed to talk to the agent.
    pub allowed_users: Vec<String>,
    pub sync_timeout_s: u64,
}

impl Default for MatrixConfig {
    fn default() -> Self {
        MatrixConfig {
            enabled: false,
            homeserver: String::new(),
            user_id: String::new(),
            access_token_env: "RAVEN_MATRIX_TOKEN".into(),
            password_env: "RAVEN_MATRIX_PASSWORD".into(),
            room_id: String::new(),
            allowed_users: Vec::new(),
            sync_timeout_s: 25,
        }
    }
}

/// `[channels.ntfy]`: push notifications to the phone (ntfy.sh or a server of one's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NtfyConfig {
    pub enabled: bool,
    pub server: String,
    /// The topic the phone subscribes to (on a public server, a name no one guesses).
    pub topic: String,
    /// The variable holding an access token, for a protected topic (empty: none).
    pub token_env: String,
    /// 1 (min) to 5 (max).
    pub priority: u8,
    /// Seconds a feedback button stays valid.
    pub link_ttl_s: i64,
    /// Whether what the phone publishes to the topic reaches Raven (commands, reminders).
    pub listen: bool,
    /// Seconds between two reads of the topic while listening.
    pub poll_s: u64,
}

impl Default for NtfyConfig {
    fn default() -> Self {
        NtfyConfig {
            enabled: false,
            server: "https://ntfy.sh".into(),
            topic: String::new(),
            token_env: "RAVEN_NTFY_TOKEN".into(),
            priority: 3,
            link_ttl_s: 7 * 24 * 3600,
            listen: true,
            poll_s: 10,
        }
    }
}

/// How the SMTP connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SmtpSecurity {
    /// Plain connection upgraded with STARTTLS (port 587); refused when the server cannot.
    #[default]
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No encryption: only for a server on this machine.
    None,
}

/// `[channels.email]`: one message per nudge, by SMTP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmailConfig {
    pub enabled: bool,
    pub smtp_host: String,
    pub smtp_port: u16,
    pub security: SmtpSecurity,
    /// Login name (empty: no login).
    pub username: String,
    pub password_env: String,
    /// `Raven <raven@example.org>`.
    pub from: String,
    /// The user's address.
    pub to: String,
    pub timeout_s: u64,
}

impl Default for EmailConfig {
    fn default() -> Self {
        EmailConfig {
            enabled: false,
            smtp_host: String::new(),
            smtp_port: 587,
            security: SmtpSecurity::Starttls,
            username: String::new(),
            password_env: "RAVEN_SMTP_PASSWORD".into(),
            from: String::new(),
            to: String::new(),
            timeout_s: 30,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enabled_channel_names_what_it_lacks_and_bounds_hold() {
        assert_eq!(ChannelsConfig::default().check(), Ok(()));
        let mut c = ChannelsConfig::default();
        c.telegram.enabled = true;
        assert!(c.check().unwrap_err().contains("channels.telegram.allowed_users"));
        c.telegram.allowed_users = vec!["42".into()];
        assert_eq!(c.check(), Ok(()));
        assert_eq!(c.first_home().as_deref(), Some("telegram:42"));
        c.ntfy.link_ttl_s = i64::MAX;
        assert!(c.check().unwrap_err().contains("channels.ntfy.link_ttl_s"));
        c.ntfy.link_ttl_s = 3600;
        c.telegram.poll_timeout_s = 0;
        assert!(c.check().unwrap_err().contains("poll_timeout_s"));
        c.telegram.poll_timeout_s = 25;
        c.matrix.enabled = true;
        assert!(c.check().unwrap_err().contains("channels.matrix.homeserver"));
    }
}
