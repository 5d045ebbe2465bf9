//! The Telegram adapter against a Bot API on 127.0.0.1 that misbehaves: updates the parser
//! refuses, a batch that stays unreadable or is too large, a supervisor that keeps refusing an
//! update, a group's first message, a portal page with 200, an answer that never comes.

use super::*;
use crate::channels::health::HealthBoard;
use crate::channels::hosting::Hosted;
use futures_util::future::LocalBoxFuture;
use std::cell::RefCell;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the stub does with one request.
#[derive(Clone)]
enum Reply {
    Answer(u16, Vec<u8>),
    /// The head of a 200, then nothing.
    HeadThenSilence,
    /// Nothing at all.
    Silence,
}

/// One request the stub saw: its method and JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A Bot API at a local port: `answer` says what each request gets.
async fn stub(answer: impl Fn(&str, &Value) -> Reply + 'static) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Default::default();
    let log = seen.clone();
    actix_rt::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let Some((method, body)) = request(&mut stream).await else { continue };
            log.lock().unwrap().push((method.clone(), body.clone()));
            let reply = answer(&method, &body);
            actix_rt::spawn(respond(stream, reply));
        }
    });
    (url, seen)
}

/// The method and the JSON body of the one request on `stream`.
async fn request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&buf).into_owned();
        let Some(end) = text.find("\r\n\r\n") else { continue };
        let length = text[..end]
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0usize);
        if buf.len() >= end + 4 + length {
            let method = text.split_whitespace().nth(1)?.rsplit('/').next()?.to_owned();
            return Some((method, serde_json::from_slice(&buf[end + 4..end + 4 + length]).ok()?));
        }
    }
}

async fn respond(mut stream: TcpStream, reply: Reply) {
    let head = |status: u16, length: usize| {
        format!("HTTP/1.1 {status} X\r\ncontent-length: {length}\r\nconnection: close\r\n\r\n")
    };
    match reply {
        Reply::Answer(status, body) => {
            let _ = stream.write_all(head(status, body.len()).as_bytes()).await;
            let _ = stream.write_all(&body).await;
        }
        Reply::HeadThenSilence => {
            let _ = stream.write_all(head(200, 1000).as_bytes()).await;
            let _ = stream.read(&mut [0u8; 1]).await;
        }
        Reply::Silence => {
            let _ = stream.read(&mut [0u8; 1]).await;
        }
    }
}

/// Updates as raw JSON texts (one may be JSON the parser refuses), served from the offset.
fn batch(updates: &[(i64, &str)], req: &Value) -> Reply {
    let offset = req["offset"].as_i64().unwrap_or(0);
    let limit = req["limit"].as_u64().unwrap_or(100) as usize;
    let fresh: Vec<&str> = updates.iter().filter(|(id, _)| *id >= offset).take(limit).map(|(_, u)| *u).collect();
    Reply::Answer(200, format!(r#"{{"ok":true,"result":[{}]}}"#, fresh.join(",")).into_bytes())
}

fn text_update(id: i64, from: i64, chat: i64, text: &str) -> String {
    format!(
        r#"{{"update_id":{id},"message":{{"message_id":{id},"from":{{"id":{from}}},"chat":{{"id":{chat}}},"text":"{text}"}}}}"#
    )
}

fn sent_ok() -> Reply {
    Reply::Answer(200, br#"{"ok":true,"result":{"message_id":7}}"#.to_vec())
}

fn telegram(dir: &DataDir, base: &str, timeout: Duration) -> Telegram {
    Telegram {
        api: BotApi::new(base, "1:t", timeout, Duration::from_secs(1)).unwrap(),
        allowed: Allowed::new("telegram", &["42".to_owned()]),
        users: vec!["42".to_owned()],
        home: Some("42".to_owned()),
        poll_timeout_s: 0,
        state: ChannelState::new(dir, "telegram"),
        sent_parts: Mutex::new(HashMap::new()),
        pacer: Mutex::new(pace::Pacer::default()),
        stuck: Mutex::new(updates::Stuck::default()),
    }
}

/// An inbox that keeps what it heard (and whether the chat was reachable then) and what was
/// skipped; the supervisor does not take a text holding "refuse".
struct Heard {
    state: ChannelState,
    messages: RefCell<Vec<(String, String, bool)>>,
    skipped: RefCell<Vec<String>>,
}

impl Heard {
    fn new(dir: &DataDir) -> Self {
        Heard { state: ChannelState::new(dir, "telegram"), messages: Default::default(), skipped: Default::default() }
    }
    fn texts(&self) -> Vec<String> {
        self.messages.borrow().iter().map(|(_, t, _)| t.clone()).collect()
    }
}

impl Inbox for Heard {
    fn message<'a>(&'a self, _: &'a str, chat: &'a str, text: &'a str) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        let reachable = self.state.load::<Offsets>().chats.iter().any(|c| c == chat);
        self.messages.borrow_mut().push((chat.to_owned(), text.to_owned(), reachable));
        let refused = text.contains("refuse");
        Box::pin(async move {
            match refused {
                true => Err(ChannelError::Inbox("control socket: frame too large".into())),
                false => Ok(()),
            }
        })
    }
    fn verdict(&self, _: &str, _: &str) -> Result<String, ChannelError> {
        Ok(String::new())
    }
    fn skipped(&self, _: &str, why: &str) {
        self.skipped.borrow_mut().push(why.to_owned());
    }
}

fn offset(dir: &DataDir) -> i64 {
    ChannelState::new(dir, "telegram").load::<Offsets>().offset
}

#[actix_rt::test]
async fn an_update_the_parser_refuses_is_skipped_and_the_next_one_heard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let stranger =
        r#"{"update_id":100,"message":{"message_id":1,"from":{"id":999},"chat":{"id":999},"text":"hi \ud800"}}"#;
    let next = text_update(101, 42, 42, "/remind in 30m");
    let updates = [(100, stranger.to_owned()), (101, next)];
    let (url, _) =
        stub(move |_, req| batch(&updates.iter().map(|(i, u)| (*i, u.as_str())).collect::<Vec<_>>(), req)).await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    tg.poll(&inbox).await.unwrap();
    assert_eq!(inbox.texts(), ["/remind in 30m"]);
    assert_eq!(offset(&dir), 102, "the offset moved past both");
    assert!(inbox.skipped.borrow()[0].starts_with("update 100 was skipped"), "{:?}", inbox.skipped);
}

#[actix_rt::test]
async fn an_update_the_supervisor_keeps_refusing_is_skipped_after_a_few_tries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let updates = [(100, text_update(100, 42, 42, "refuse me")), (101, text_update(101, 42, 42, "and then"))];
    let (url, _) =
        stub(move |_, req| batch(&updates.iter().map(|(i, u)| (*i, u.as_str())).collect::<Vec<_>>(), req)).await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    for _ in 1..updates::INBOX_TRIES {
        assert!(matches!(tg.poll(&inbox).await, Err(ChannelError::Inbox(_))), "retried while it may pass");
        assert_eq!(offset(&dir), 0);
    }
    tg.poll(&inbox).await.unwrap();
    assert_eq!(inbox.texts().last().map(String::as_str), Some("and then"));
    assert_eq!(offset(&dir), 102);
    assert!(inbox.skipped.borrow()[0].contains("update 100"), "{:?}", inbox.skipped);
}

#[actix_rt::test]
async fn a_batch_that_stays_unreadable_is_asked_one_update_at_a_time_then_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let next = text_update(101, 42, 42, "after the broken one");
    let (url, seen) = stub(move |_, req| match req["offset"].as_i64().unwrap_or(0) {
        ..=100 => Reply::Answer(200, br#"{"ok":true,"result":[{"update_id":100,"message":{"te"#.to_vec()),
        _ => batch(&[(101, next.as_str())], req),
    })
    .await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    for _ in 1..updates::UNREADABLE_TRIES {
        assert!(matches!(tg.poll(&inbox).await, Err(ChannelError::Transient(_))));
    }
    tg.poll(&inbox).await.unwrap();
    assert_eq!(offset(&dir), 101, "update 100 skipped");
    tg.poll(&inbox).await.unwrap();
    assert_eq!(inbox.texts(), ["after the broken one"]);
    let limits: Vec<_> = seen.lock().unwrap().iter().map(|(_, r)| r["limit"].as_u64().unwrap()).collect();
    assert_eq!(limits[..2], [100, 1], "asked one at a time once a batch was unreadable");
}

#[actix_rt::test]
async fn a_batch_over_the_answer_limit_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let huge = text_update(100, 999, 999, &"x".repeat(crate::channels::remote::MAX_ANSWER_BYTES));
    let (url, _) = stub(move |_, req| batch(&[(100, huge.as_str())], req)).await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    let e = tg.poll(&inbox).await.unwrap_err();
    assert!(e.to_string().contains("the answer is over"), "{e}");
}

#[actix_rt::test]
async fn a_group_an_allowed_user_writes_from_is_reachable_before_its_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let updates = [(100, text_update(100, 42, -100123, "hello group"))];
    let (url, _) =
        stub(move |_, req| batch(&updates.iter().map(|(i, u)| (*i, u.as_str())).collect::<Vec<_>>(), req)).await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    tg.poll(&inbox).await.unwrap();
    assert_eq!(*inbox.messages.borrow(), [("-100123".to_owned(), "hello group".to_owned(), true)]);
}

fn message(id: &str) -> OutboundText {
    OutboundText::proactive(id, "telegram", "42", "Take the pills")
}

fn sends(seen: &Seen) -> usize {
    seen.lock().unwrap().iter().filter(|(m, _)| m == "sendMessage").count()
}

#[actix_rt::test]
async fn a_page_that_is_not_the_bot_apis_answer_waits_whatever_its_status() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let (url, _) = stub(|_, req| {
        let status = if req["text"].as_str().unwrap_or_default().contains('A') { 200 } else { 502 };
        Reply::Answer(status, b"<html><body>Please log in to the Wi-Fi</body></html>".to_vec())
    })
    .await;
    let tg = telegram(&dir, &url, Duration::from_secs(5));
    for text in ["message A", "message B"] {
        let sent = tg.deliver(&OutboundText::proactive(text, "telegram", "42", text)).await;
        assert!(matches!(sent, Err(OutletError::Transient(_))), "{text}: {sent:?}");
    }
}

#[actix_rt::test]
async fn a_send_whose_answer_never_comes_is_not_sent_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let (url, seen) = stub(|_, req| match req["text"].as_str().unwrap_or_default().contains("silent") {
        true => Reply::Silence,
        false => Reply::HeadThenSilence,
    })
    .await;
    let health = HealthBoard::new(&dir);
    let hosted = Hosted::new(Arc::new(telegram(&dir, &url, Duration::from_millis(300))), health);
    for (i, text) in [message("d1"), OutboundText::proactive("d2", "telegram", "42", "silent")].iter().enumerate() {
        let first = hosted.deliver(text).await;
        assert!(
            matches!(&first, Err(OutletError::Refused(why)) if why.contains("may have been delivered")),
            "{first:?}"
        );
        assert_eq!(hosted.deliver(text).await, first, "the retry is answered from the first try");
        assert_eq!(sends(&seen), i + 1, "sent once");
    }
}

#[actix_rt::test]
async fn a_send_that_plainly_failed_is_tried_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let refused = telegram(&dir, &nobody, Duration::from_millis(300)).deliver(&message("d1")).await;
    assert!(matches!(refused, Err(OutletError::Transient(_))), "{refused:?}");
    let (url, seen) =
        stub(|_, _| Reply::Answer(502, br#"{"ok":false,"error_code":502,"description":"Bad Gateway"}"#.to_vec())).await;
    let hosted = Hosted::new(Arc::new(telegram(&dir, &url, Duration::from_millis(300))), HealthBoard::new(&dir));
    for _ in 0..2 {
        assert!(matches!(hosted.deliver(&message("d2")).await, Err(OutletError::Transient(_))));
    }
    assert_eq!(sends(&seen), 2, "a 502 is tried again");
    let (url, seen) = stub(|_, _| sent_ok()).await;
    assert_eq!(telegram(&dir, &url, Duration::from_secs(5)).deliver(&message("d3")).await, Ok(()));
    assert_eq!(sends(&seen), 1);
}

#[actix_rt::test]
async fn the_channel_test_sets_the_command_menu_and_listening_never_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let (url, seen) = stub(|method, req| match method {
        "getUpdates" => batch(&[], req),
        "getMe" => Reply::Answer(200, br#"{"ok":true,"result":{"username":"raven_bot"}}"#.to_vec()),
        _ => sent_ok(),
    })
    .await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    let _ = tokio::time::timeout(Duration::from_millis(200), tg.listen(&inbox)).await;
    let only_polls = seen.lock().unwrap().iter().all(|(m, _)| m == "getUpdates");
    assert!(only_polls, "a listening gateway asks for updates and nothing else");

    let said = tg.test().await.unwrap();
    assert!(said.ends_with("and set the bot's command menu"), "{said}");
    let seen = seen.lock().unwrap();
    let menu = &seen.iter().find(|(m, _)| m == "setMyCommands").unwrap().1;
    let names: Vec<&str> = menu["commands"].as_array().unwrap().iter().filter_map(|c| c["command"].as_str()).collect();
    for name in ["remind", "list", "cancel", "earlier", "why", "help"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

#[actix_rt::test]
async fn ok_or_stop_sent_as_a_reply_to_a_nudge_is_aimed_at_that_nudge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path());
    let reply = |id: i64, text: &str, data: &str| {
        format!(
            r#"{{"update_id":{id},"message":{{"message_id":{id},"from":{{"id":42}},"chat":{{"id":42}},"text":"{text}",
            "reply_to_message":{{"message_id":7,"chat":{{"id":42}},"text":"Heads-up: the dentist",
            "reply_markup":{{"inline_keyboard":[[{{"text":"👍","callback_data":"{data}"}}]]}}}}}}}}"#
        )
    };
    let updates = [
        (100, reply(100, "/stop", "v:accepted:3fa2c1")),
        (101, reply(101, "/OK", "v:accepted:9bb001")),
        (102, reply(102, "/stop water", "v:accepted:3fa2c1")),
        (103, reply(103, "thanks!", "v:accepted:3fa2c1")),
        (104, reply(104, "/stop", "p:menu1:2")),
    ];
    let (url, _) =
        stub(move |_, req| batch(&updates.iter().map(|(i, u)| (*i, u.as_str())).collect::<Vec<_>>(), req)).await;
    let (tg, inbox) = (telegram(&dir, &url, Duration::from_secs(5)), Heard::new(&dir));
    tg.poll(&inbox).await.unwrap();
    assert_eq!(inbox.texts(), ["/stop [3fa2c1]", "/ok [9bb001]", "/stop water", "thanks!", "/stop"]);
}
