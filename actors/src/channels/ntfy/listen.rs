//! ntfy's listening half. The phone publishes to the topic from the ntfy app (the field under
//! the topic's messages), and Raven reads the topic every `poll_s` seconds
//! (`GET <server>/<topic>/json?poll=1&since=<time>`), taking each message it did not publish
//! itself as the user's: a command, a reminder, a verdict (`/ok`, `/stop`). Raven's own
//! messages carry the `bird` tag and are passed over. Where the reading stands is kept in
//! `gateway/ntfy.json`, so a restart neither loses nor repeats a message. A topic that cannot
//! be read (an error answer, an address that is not an ntfy server) costs only the listening:
//! sends go on, the error is kept for `raven channels`, and the next read waits longer each
//! time, up to 5 minutes.

use super::Ntfy;
use crate::channels::{remote, ChannelError, Inbox};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The tag every message Raven publishes carries; a message with it is Raven's own.
pub(super) const OWN_TAG: &str = "bird";

/// The longest wait between two reads of a topic that could not be read.
const MAX_PAUSE: Duration = Duration::from_secs(300);

/// The most bytes one read of the topic takes (ntfy keeps 12 hours of messages).
const MAX_READ_BYTES: usize = 4 * 1024 * 1024;

/// How long a read waits for more once nothing comes, at most: a server that streams the topic
/// (as ntfy does without `poll=1`) has sent what it had by then. A quarter of `poll_s` when that
/// is shorter.
pub(super) const IDLE: Duration = Duration::from_millis(1500);

/// Tries for a message the supervisor does not take before it is skipped.
const INBOX_TRIES: u32 = 5;

/// Where the reading stands.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Cursor {
    /// The time (unix seconds) of the last message taken; 0 before the first read.
    since: i64,
    /// The ids of the messages taken in that second (a read from it lists them again).
    taken: Vec<String>,
}

/// One line of the topic's JSON stream.
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(default)]
    id: String,
    #[serde(default)]
    event: String,
    #[serde(default)]
    time: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    tags: Vec<String>,
}

impl Event {
    /// A message someone other than Raven published.
    fn is_the_user_s(&self) -> bool {
        !self.tags.iter().any(|t| t == OWN_TAG) && !self.message.trim().is_empty()
    }
}

impl Cursor {
    /// Whether `e` is a message not taken yet.
    fn is_new(&self, e: &Event) -> bool {
        let unread = e.time > self.since || (e.time == self.since && !self.taken.contains(&e.id));
        e.event == "message" && !e.id.is_empty() && e.time > 0 && unread
    }

    fn take(&mut self, e: &Event) {
        if e.time > self.since {
            self.since = e.time;
            self.taken.clear();
        }
        self.taken.push(e.id.clone());
    }
}

/// The answer's bytes, up to its end or until nothing has come for `idle`; over
/// [`MAX_READ_BYTES`] it is refused.
async fn read_batch(mut resp: reqwest::Response, idle: Duration) -> Result<Vec<u8>, ChannelError> {
    let mut body = Vec::new();
    loop {
        let chunk = match actix_rt::time::timeout(idle, resp.chunk()).await {
            Err(_) => return Ok(body),
            Ok(chunk) => chunk.map_err(|e| ChannelError::Transient(format!("ntfy: {e}")))?,
        };
        let Some(chunk) = chunk else { return Ok(body) };
        if body.len() + chunk.len() > MAX_READ_BYTES {
            return Err(ChannelError::Transient(format!(
                "ntfy: the answer is over {MAX_READ_BYTES} bytes; it was dropped"
            )));
        }
        body.extend_from_slice(&chunk);
    }
}

impl Ntfy {
    /// Reads the topic every `poll_s` for ever; a read that fails waits longer, up to 5 minutes.
    pub(super) async fn listen_to_topic(&self, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let mut backoff = crate::supervise::backoff::Backoff::new(self.poll_every, MAX_PAUSE);
        let mut tries = (String::new(), 0u32);
        loop {
            let wait = match self.read_topic(inbox, &mut tries).await {
                Ok(()) => {
                    backoff.reset();
                    self.poll_every
                }
                Err(ChannelError::Inbox(why)) => return Err(ChannelError::Inbox(why)),
                Err(e) => {
                    let why = format!("cannot read the topic (sending goes on): {e}");
                    if backoff.failures() == 0 {
                        tracing::warn!("ntfy: {why}");
                    }
                    inbox.skipped("ntfy", &why);
                    backoff.next_wait()
                }
            };
            actix_rt::time::sleep(wait).await;
        }
    }

    /// One read of the topic, and what it brought from the user, in order.
    async fn read_topic(&self, inbox: &dyn Inbox, tries: &mut (String, u32)) -> Result<(), ChannelError> {
        let mut cursor: Cursor = self.state.load();
        if cursor.since == 0 {
            // The first read starts now: what was published before Raven listened is history.
            cursor.since = chrono::Utc::now().timestamp();
            self.keep(&cursor);
        }
        let mut events = self.events_since(cursor.since).await?;
        inbox.alive("ntfy");
        events.sort_by_key(|e| e.time);
        for e in &events {
            if !cursor.is_new(e) {
                continue;
            }
            if e.is_the_user_s() {
                self.hand_over(e, inbox, tries).await?;
            }
            cursor.take(e);
            self.keep(&cursor);
        }
        Ok(())
    }

    /// The topic's messages from `since` on.
    async fn events_since(&self, since: i64) -> Result<Vec<Event>, ChannelError> {
        let url = format!("{}/{}/json?poll=1&since={since}", self.server, self.topic);
        let mut req = self.client.get(&url);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.map_err(|e| ChannelError::Transient(format!("ntfy: {e}")))?;
        let status = resp.status();
        if status.is_redirection() {
            return Err(remote::redirected("ntfy", &resp));
        }
        if !status.is_success() {
            return Err(ChannelError::Transient(format!("ntfy answered {status}: {}", remote::error_text(resp).await)));
        }
        let body = read_batch(resp, self.idle).await?;
        let lines = String::from_utf8_lossy(&body);
        let events: Vec<Event> =
            lines.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect();
        if events.is_empty() && !lines.trim().is_empty() {
            let start = remote::short(&lines);
            return Err(ChannelError::Transient(format!("the answer is not ntfy's JSON stream: {start}")));
        }
        Ok(events)
    }

    /// Hands `e` to the supervisor; one it keeps refusing is skipped after [`INBOX_TRIES`].
    async fn hand_over(&self, e: &Event, inbox: &dyn Inbox, tries: &mut (String, u32)) -> Result<(), ChannelError> {
        match inbox.message("ntfy", &self.topic, &e.message).await {
            Ok(()) => Ok(()),
            Err(err) => {
                let n = if tries.0 == e.id { tries.1 + 1 } else { 1 };
                *tries = (e.id.clone(), n);
                if n < INBOX_TRIES {
                    return Err(err);
                }
                let why = format!("ntfy: message {} was skipped after {n} tries: {err}", e.id);
                tracing::warn!("{why}");
                inbox.skipped("ntfy", &why);
                Ok(())
            }
        }
    }

    fn keep(&self, cursor: &Cursor) {
        if let Err(e) = self.state.save(cursor) {
            tracing::warn!("ntfy: where the reading stands could not be kept: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str, time: i64, tags: &[&str]) -> Event {
        Event {
            id: id.into(),
            event: "message".into(),
            time,
            message: "/list".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// A message of the second already read is new unless it was taken; an older one never is;
    /// keep-alives and Raven's own messages are not the user's.
    #[test]
    fn the_cursor_takes_each_message_once() {
        let mut c = Cursor { since: 100, taken: vec!["a".into()] };
        assert!(!c.is_new(&event("a", 100, &[])), "taken");
        assert!(c.is_new(&event("b", 100, &[])), "the same second, not taken");
        assert!(!c.is_new(&event("z", 99, &[])), "older");
        assert!(!c.is_new(&Event { event: "keepalive".into(), ..event("k", 101, &[]) }));
        c.take(&event("c", 101, &[]));
        assert_eq!((c.since, c.taken.clone()), (101, vec!["c".to_owned()]));
        assert!(!event("d", 101, &[OWN_TAG]).is_the_user_s());
        assert!(event("d", 101, &["phone"]).is_the_user_s());
    }

    /// Hears what the listener hands over.
    #[derive(Default)]
    struct Heard(std::cell::RefCell<Vec<String>>);

    impl Inbox for Heard {
        fn message<'a>(
            &'a self,
            _: &'a str,
            chat: &'a str,
            text: &'a str,
        ) -> futures_util::future::LocalBoxFuture<'a, Result<(), ChannelError>> {
            self.0.borrow_mut().push(format!("{chat}: {text}"));
            Box::pin(async { Ok(()) })
        }
        fn verdict(&self, _: &str, _: &str) -> Result<String, ChannelError> {
            unreachable!("ntfy hears no verdicts but in words")
        }
    }

    /// A server that streams the topic and keeps the connection open (ntfy without `poll=1`):
    /// what it sent is read once nothing more comes, not after the client's timeout.
    #[actix_rt::test]
    async fn a_topic_streamed_and_kept_open_is_read_when_it_goes_quiet() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        // Published just after Raven starts to listen (its first read counts from its own
        // now, which may be a second later than the test's on a loaded machine).
        let now = chrono::Utc::now().timestamp() + 2;
        let stream = format!("{}\n{}\n", r#"{"id":"o","event":"open","time":1}"#, line("p1", now, "/list", &[]));
        std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut head = [0u8; 4096];
            let _ = c.read(&mut head);
            let chunk = format!("{:x}\r\n{stream}\r\n", stream.len());
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n{chunk}"
            );
            std::thread::sleep(std::time::Duration::from_secs(60));
        });
        let tmp = tempfile::tempdir().unwrap();
        // Read every second: the read waits a quarter of that for more.
        let config = crate::config::NtfyConfig { server, topic: "raven-x".into(), poll_s: 1, ..Default::default() };
        let heard = Heard::default();
        let ntfy = Ntfy::new(&crate::data_dir::DataDir::new(tmp.path()), &config, "").unwrap();
        ntfy.read_topic(&heard, &mut (String::new(), 0)).await.unwrap();
        assert_eq!(*heard.0.borrow(), ["raven-x: /list"]);
    }

    fn line(id: &str, time: i64, text: &str, tags: &[&str]) -> String {
        serde_json::json!({"id": id, "event": "message", "time": time, "topic": "raven-x", "message": text, "tags": tags})
            .to_string()
    }

    /// What the phone published is heard once, across a restart (a new adapter on the same
    /// data dir); Raven's own messages and the keep-alives are not; a page that is not ntfy's
    /// stream is an error, not silence.
    #[actix_rt::test]
    async fn the_phone_s_messages_are_heard_once_and_raven_s_own_never() {
        use wiremock::matchers::{method, path, query_param};
        use wiremock::{Mock, MockServer, ResponseTemplate};
        let tmp = tempfile::tempdir().unwrap();
        let server = MockServer::start().await;
        // Published just after Raven starts to listen (its first read counts from its own
        // now, which may be a second later than the test's on a loaded machine).
        let now = chrono::Utc::now().timestamp() + 2;
        let stream = [
            line("own", now, "⏰ Call the bank", &[OWN_TAG]),
            r#"{"id":"k","event":"keepalive","time":0}"#.to_owned(),
            line("p1", now, "/list", &[]),
            line("p2", now + 1, "/remind in 1h tea", &[]),
        ]
        .join("\n");
        Mock::given(method("GET"))
            .and(path("/raven-x/json"))
            .and(query_param("poll", "1"))
            .respond_with(ResponseTemplate::new(200).set_body_string(stream))
            .mount(&server)
            .await;
        let config = crate::config::NtfyConfig { server: server.uri(), topic: "raven-x".into(), ..Default::default() };
        let dir = crate::data_dir::DataDir::new(tmp.path());
        let heard = Heard::default();
        let mut tries = (String::new(), 0);
        Ntfy::new(&dir, &config, "").unwrap().read_topic(&heard, &mut tries).await.unwrap();
        Ntfy::new(&dir, &config, "").unwrap().read_topic(&heard, &mut tries).await.unwrap();
        assert_eq!(*heard.0.borrow(), ["raven-x: /list", "raven-x: /remind in 1h tea"]);
        let asked = server.received_requests().await.unwrap();
        assert!(asked[1].url.query().unwrap().contains(&format!("since={}", now + 1)), "{}", asked[1].url);

        let page = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(200).set_body_string("<html>"))
            .mount(&page)
            .await;
        let config = crate::config::NtfyConfig { server: page.uri(), ..config };
        let failed = Ntfy::new(&dir, &config, "").unwrap().read_topic(&heard, &mut tries).await.unwrap_err();
        assert!(failed.to_string().contains("not ntfy's JSON stream"), "{failed}");
    }
}
