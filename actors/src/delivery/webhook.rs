//! The webhook outlet: each message is POSTed as JSON to the configured URL with the shared
//! secret in `x-raven-secret`. A redirect is not followed (the secret and the message would go
//! to whatever host it names): it is a failure that says where it pointed, and the message
//! waits in the outbox. An error answer is read only to a bound, and kept cut and clean.

use super::outlets::{Outlet, OutletError};
use crate::channels::remote;
use crate::supervise::backoff::Backoff;
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use std::time::Duration;

/// POSTs a JSON body to a configured URL with a shared-secret header; retries transient
/// failures with exponential backoff, then gives up with an error (the hub keeps the message).
pub struct WebhookOutlet {
    client: reqwest::Client,
    url: String,
    secret: Option<String>,
    attempts: u32,
    backoff: Duration,
}

pub const SECRET_HEADER: &str = "x-raven-secret";

/// What one POST came to.
enum Answer {
    Delivered,
    /// Worth another attempt now (a 5xx, a 429, a lost connection).
    Again(OutletError),
    /// Not worth another attempt now (a refusal, a redirect).
    Final(OutletError),
}

impl WebhookOutlet {
    pub fn new(
        url: &str,
        secret: Option<String>,
        attempts: u32,
        backoff: Duration,
        timeout: Duration,
    ) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(remote::CONNECT_TIMEOUT.min(timeout))
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(WebhookOutlet { client, url: url.to_owned(), secret, attempts: attempts.max(1), backoff })
    }

    async fn post(&self, text: &OutboundText) -> Result<(), OutletError> {
        let body = serde_json::json!({
            "delivery_id": text.delivery_id,
            "channel": text.channel,
            "chat_id": text.chat_id,
            "content": text.content,
            "proactive": text.is_proactive(),
        });
        let mut last = OutletError::Transient("not attempted".into());
        for attempt in 0..self.attempts {
            if attempt > 0 {
                actix_rt::time::sleep(Backoff::new(self.backoff, Duration::MAX).wait_before(attempt)).await;
            }
            match self.attempt(&body).await {
                Answer::Delivered => return Ok(()),
                Answer::Final(e) => return Err(e),
                Answer::Again(e) => last = e,
            }
        }
        Err(last)
    }

    async fn attempt(&self, body: &serde_json::Value) -> Answer {
        let mut req = self.client.post(&self.url).json(body);
        if let Some(s) = &self.secret {
            req = req.header(SECRET_HEADER, s);
        }
        let r = match req.send().await {
            Ok(r) => r,
            Err(e) => return Answer::Again(OutletError::Transient(remote::short(&e.to_string()))),
        };
        let status = r.status();
        if status.is_success() {
            return Answer::Delivered;
        }
        if status.is_redirection() {
            return Answer::Final(remote::redirected("webhook", &r).into());
        }
        let why = match remote::error_text(r).await {
            said if said.is_empty() => format!("HTTP {}", status.as_u16()),
            said => format!("HTTP {}: {said}", status.as_u16()),
        };
        match status.is_client_error() && status.as_u16() != 429 {
            true => Answer::Final(OutletError::Refused(why)),
            false => Answer::Again(OutletError::Transient(why)),
        }
    }
}

impl Outlet for WebhookOutlet {
    fn channel(&self) -> &str {
        "webhook"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(self.post(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn outlet(url: &str) -> WebhookOutlet {
        WebhookOutlet::new(url, Some("s3cret".into()), 3, Duration::from_millis(1), Duration::from_secs(5)).unwrap()
    }

    fn text() -> OutboundText {
        OutboundText::proactive("d1", "webhook", "me", "hello hook")
    }

    /// A 307 to another host: neither the secret nor the message goes there, the receiver is
    /// asked once, and the message waits with an error naming where the redirect pointed.
    #[actix_rt::test]
    async fn a_redirect_takes_neither_the_secret_nor_the_message_elsewhere() {
        let other = MockServer::start().await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(200)).mount(&other).await;
        let receiver = MockServer::start().await;
        let moved = ResponseTemplate::new(307).insert_header("location", format!("{}/collect", other.uri()));
        Mock::given(method("POST")).respond_with(moved).mount(&receiver).await;
        let failed = outlet(&format!("{}/hook", receiver.uri())).deliver(&text()).await.unwrap_err();
        assert!(
            matches!(failed, OutletError::Transient(ref why) if why.contains("redirect") && why.contains("/collect")),
            "{failed:?}"
        );
        assert_eq!(other.received_requests().await.unwrap().len(), 0, "the other host got nothing");
        assert_eq!(receiver.received_requests().await.unwrap().len(), 1, "a redirect is not retried in place");
    }

    /// An error answer's text is kept, cut and without its escapes.
    #[actix_rt::test]
    async fn an_error_answer_is_kept_short_and_clean() {
        let server = MockServer::start().await;
        let body = format!("no \x1b]0;PWNED\x07\x1b[31mway{}", "!".repeat(1024 * 1024));
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(400).set_body_string(body)).mount(&server).await;
        let failed = outlet(&server.uri()).deliver(&text()).await.unwrap_err();
        let OutletError::Refused(why) = failed else { panic!("{failed:?}") };
        assert!(why.starts_with("HTTP 400: no way!!!"), "{}", &why[..40]);
        assert!(why.chars().count() <= remote::MAX_ERROR_CHARS + 16, "{} chars", why.chars().count());
    }
}
