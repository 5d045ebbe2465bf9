//! Email: one message per nudge by SMTP (lettre, rustls: STARTTLS, TLS, or plain for a server
//! on this machine). Each message has its delivery id as its Message-ID (a redelivery is
//! recognisable) and `References` to one thread per recipient, with `Reply-To` the sender, so
//! a mail client keeps Raven's messages in one conversation. A server's 4xx is a transient
//! failure (the outbox retries); a 5xx is a refusal (the message becomes a dead letter). The
//! whole send (connect, login, the message and the server's answer) has `timeout_s`: a server
//! that goes silent is a transient failure, and its connection is closed.

use super::remote::short;
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
    /// How long one whole send may take.
    deadline: Duration,
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
        let deadline = Duration::from_secs(c.timeout_s.max(1));
        let mut builder = builder.map_err(|e| bad("smtp_host", &e))?.port(c.smtp_port).timeout(Some(deadline));
        if !c.username.trim().is_empty() {
            let password = super::secret(&c.password_env, "channels.email.password_env")?;
            builder = builder.credentials(Credentials::new(c.username.trim().to_owned(), password));
        }
        Ok(Email { transport: builder.build(), from, to: c.to.trim().to_owned(), deadline })
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

    /// One send within the deadline; past it the send is dropped, and its connection with it.
    async fn send(&self, message: Message) -> Result<(), ChannelError> {
        let sent = tokio::time::timeout(self.deadline, self.transport.send(message)).await;
        match sent {
            Ok(Ok(_)) => Ok(()),
            Err(_) => Err(ChannelError::Transient(format!(
                "the mail server did not finish the send within {} s (`channels.email.timeout_s`); \
                 the connection was closed, the message waits for a retry",
                self.deadline.as_secs()
            ))),
            // 530/534/535: the server refuses our login, not this message: it waits for the
            // settings to be right, as a Bot API token refused does.
            Ok(Err(e)) if e.is_permanent() && !e.status().is_some_and(|c| c.to_string().starts_with("53")) => {
                Err(ChannelError::Refused(format!("the mail server refused: {}", short(&e.to_string()))))
            }
            Ok(Err(e)) => Err(ChannelError::Transient(format!("the mail server: {}", short(&e.to_string())))),
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::TcpListener;

    /// An SMTP server that takes the message and then never answers; the flag says it saw the
    /// client close the connection.
    async fn silent_after_data() -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = closed.clone();
        actix_rt::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            write.write_all(b"220 stub\r\n").await.unwrap();
            let mut data = false;
            while let Ok(Some(line)) = lines.next_line().await {
                let answer: &[u8] = match line.to_ascii_uppercase() {
                    _ if data => continue,
                    l if l.starts_with("EHLO") => b"250 stub\r\n",
                    l if l.starts_with("DATA") => {
                        data = true;
                        b"354 go on\r\n"
                    }
                    _ => b"250 ok\r\n",
                };
                write.write_all(answer).await.unwrap();
            }
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        (port, closed)
    }

    #[actix_rt::test]
    async fn a_server_silent_after_the_message_is_given_up_and_its_connection_closed() {
        let (port, closed) = silent_after_data().await;
        let config = EmailConfig {
            enabled: true,
            smtp_host: "127.0.0.1".into(),
            smtp_port: port,
            security: SmtpSecurity::None,
            from: "Raven <raven@example.org>".into(),
            to: "you@example.org".into(),
            timeout_s: 1,
            ..EmailConfig::default()
        };
        let email = Email::new(&config).unwrap();
        let started = std::time::Instant::now();
        let text = crate::channels::test_message("email", "you@example.org");
        let ended = tokio::time::timeout(Duration::from_secs(5), email.deliver(&text)).await;
        let failed = ended.expect("the send ends on its own").unwrap_err();
        assert!(matches!(failed, OutletError::Transient(ref why) if why.contains("within 1 s")), "{failed:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while !closed.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the connection was left open");
            actix_rt::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
