//! Email: one message per nudge by SMTP (lettre, rustls: STARTTLS, TLS, or plain for a server
//! on this machine). Each message has its delivery id as its Message-ID (a redelivery is
//! recognisable) and `References` to one thread per recipient, with `Reply-To` the sender, so
//! a mail client keeps Raven's messages in one conversation. A server's 4xx is a transient
//! failure (the outbox retries); a 5xx is a refusal (the message becomes a dead letter).

use super::{Adapter, ChannelError};
use crate::config::{EmailConfig, SmtpSecurity};
use crate::delivery::outlets::{Outlet, OutletError};
use futures_util::future::LocalBoxFuture;
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use raven_proto::OutboundText;
use std::time::Duration;

pub struct Email {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: String,
}

impl Email {
    pub fn new(c: &EmailConfig) -> Result<Self, ChannelError> {
        let bad = |key: &str, e: &dyn std::fmt::Display| ChannelError::Config(format!("`channels.email.{key}`: {e}"));
        let address = |key: &str, v: &str| {
            v.parse::<Mailbox>().map_err(|e| {
                bad(
                    key,
                    &format!("{v:?} is not an email address ({e}); say `you@example.org` or `Name <you@example.org>`"),
                )
            })
        };
        let from = address("from", &c.from)?;
        address("to", &c.to)?;
        let host = c.smtp_host.trim();
        let builder = match c.security {
            SmtpSecurity::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host),
            SmtpSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(host),
            SmtpSecurity::None => Ok(AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)),
        };
        let mut builder = builder
            .map_err(|e| bad("smtp_host", &e))?
            .port(c.smtp_port)
            .timeout(Some(Duration::from_secs(c.timeout_s.max(1))));
        if !c.username.trim().is_empty() {
            let password = super::secret(&c.password_env, "channels.email.password_env")?;
            builder = builder.credentials(Credentials::new(c.username.trim().to_owned(), password));
        }
        Ok(Email { transport: builder.build(), from, to: c.to.trim().to_owned() })
    }

    /// The message for `text`, to `to`.
    pub fn message(&self, text: &OutboundText, to: &str) -> Result<Message, ChannelError> {
        let to: Mailbox = to.parse().map_err(|e| ChannelError::Refused(format!("not an address: {to}: {e}")))?;
        let content = crate::text::sanitize(&text.content);
        let first = content.lines().find(|l| !l.trim().is_empty()).unwrap_or("a message");
        let subject: String = first.chars().take(70).collect();
        let domain = self.from.email.domain().to_owned();
        let thread = format!("<raven-thread.{:08x}@{domain}>", crate::store::fnv1a(to.email.to_string().as_bytes()));
        let id: String = text.delivery_id.chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).collect();
        Message::builder()
            .from(self.from.clone())
            .reply_to(self.from.clone())
            .to(to)
            .subject(if text.is_proactive() { format!("Raven ⏰ {subject}") } else { format!("Raven: {subject}") })
            .message_id(Some(format!("<{id}@{domain}>")))
            .in_reply_to(thread.clone())
            .references(thread)
            .header(ContentType::TEXT_PLAIN)
            .body(content)
            .map_err(|e| ChannelError::Refused(format!("the message could not be built: {e}")))
    }

    async fn send(&self, message: Message) -> Result<(), ChannelError> {
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            // 530/534/535: the server refuses our login, not this message: it waits for the
            // settings to be right, as a Bot API token refused does.
            Err(e) if e.is_permanent() && !e.status().is_some_and(|c| c.to_string().starts_with("53")) => {
                Err(ChannelError::Refused(format!("the mail server refused: {e}")))
            }
            Err(e) => Err(ChannelError::Transient(format!("the mail server: {e}"))),
        }
    }
}

impl Outlet for Email {
    fn channel(&self) -> &str {
        "email"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            let to = super::home_only("email", &text.chat_id, &self.to)?;
            let message = self.message(text, to)?;
            self.send(message).await.map_err(OutletError::from)
        })
    }
}

impl Adapter for Email {
    fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>> {
        Box::pin(async move {
            let text = super::test_message("email", &self.to);
            self.send(self.message(&text, &self.to)?).await?;
            Ok(format!("sent a test message to {}", self.to))
        })
    }
}
