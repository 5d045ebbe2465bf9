//! The Matrix adapter against a stub homeserver: answers are read within bounds, a redirect
//! and an error are failures with a clean text, and a gap that pages for ever is cut short
//! while the sync goes on.

use super::api::MAX_ANSWER;
use super::gap::{CUT_SHORT_FAILING, GAP_PAGES};
use super::*;
use futures_util::future::LocalBoxFuture;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// What the supervisor was handed.
#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl Inbox for Heard {
    fn message<'a>(&'a self, _: &'a str, _: &'a str, text: &'a str) -> LocalBoxFuture<'a, Result<(), ChannelError>> {
        self.0.lock().unwrap().push(text.to_owned());
        Box::pin(async { Ok(()) })
    }

    fn verdict(&self, _: &str, _: &str) -> Result<String, ChannelError> {
        Ok(String::new())
    }
}

/// The adapter for the homeserver at `base`, with a token and a sync position already taken.
fn matrix(dir: &std::path::Path, base: &str) -> Matrix {
    let saved = Saved { next_batch: Some("s0".into()), ..Saved::default() };
    Matrix {
        client: crate::channels::http_client(Duration::from_secs(5)).unwrap(),
        base: base.to_owned(),
        user_id: "@raven:fake".into(),
        room_id: "!r:fake".into(),
        token_env: Some("tok".into()),
        password: None,
        allowed: Allowed::new("matrix", &["@me:fake".to_owned()]),
        sync_timeout_s: 1,
        state: ChannelState::new(&DataDir::new(dir), "matrix"),
        saved: Mutex::new(saved),
        gaps_cut: AtomicU32::new(0),
    }
}

/// A sync whose timeline is limited, with one message from the user after the gap.
fn limited_sync(n: u64) -> Value {
    let event = json!({"event_id": format!("$m{n}"), "type": "m.room.message", "sender": "@me:fake",
        "origin_server_ts": chrono::Utc::now().timestamp_millis(), "content": {"msgtype": "m.text", "body": format!("hello {n}")}});
    let timeline = json!({"events": [event], "limited": true, "prev_batch": "p0"});
    json!({"next_batch": format!("s{n}"), "rooms": {"join": {"!r:fake": {"timeline": timeline}}}})
}

async fn mount(server: &MockServer, path: &str, answer: ResponseTemplate) {
    Mock::given(method("GET")).and(path_regex(path)).respond_with(answer).mount(server).await;
}

async fn asked(server: &MockServer, part: &str) -> usize {
    server.received_requests().await.unwrap().iter().filter(|r| r.url.path().contains(part)).count()
}

/// A homeserver that answers every `/messages` page with nothing and a fresh `end`: the gap
/// is given up after its pages, the user's message after it is handled, the position moves,
/// and gaps cut short again and again make the channel say so.
#[actix_rt::test]
async fn a_gap_that_never_ends_is_cut_short_and_the_sync_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::start().await;
    mount(&server, "/sync", ResponseTemplate::new(200).set_body_json(limited_sync(1))).await;
    let empty = ResponseTemplate::new(200).set_body_json(json!({"chunk": [], "end": "e-next"}));
    mount(&server, "/messages", empty).await;
    let (m, heard) = (matrix(tmp.path(), &server.uri()), Heard::default());
    for round in 1..=CUT_SHORT_FAILING {
        let synced = tokio::time::timeout(Duration::from_secs(20), m.sync(&heard)).await.expect("the sync ends");
        match round < CUT_SHORT_FAILING {
            true => synced.unwrap(),
            false => assert!(
                matches!(synced, Err(ChannelError::Transient(ref why)) if why.contains("could not be read back")),
                "{synced:?}"
            ),
        }
        assert_eq!(asked(&server, "/messages").await, GAP_PAGES * round as usize, "an empty page counts");
    }
    assert_eq!(heard.0.lock().unwrap()[0], "hello 1", "the message after the gap is answered");
    assert_eq!(m.saved().next_batch.as_deref(), Some("s1"), "the position moved");
}

/// A `/sync` answer over the bound is refused without being read whole.
#[actix_rt::test]
async fn a_giant_answer_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::start().await;
    mount(&server, "/sync", ResponseTemplate::new(200).set_body_bytes(vec![b' '; MAX_ANSWER + 1])).await;
    let failed = matrix(tmp.path(), &server.uri()).sync(&Heard::default()).await.unwrap_err();
    assert!(matches!(failed, ChannelError::Transient(ref why) if why.contains("over")), "{failed:?}");
}

/// A redirect is a failure naming where it pointed; an error's text is kept clean.
#[actix_rt::test]
async fn a_redirect_or_an_error_is_a_failure_with_a_clean_text() {
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::start().await;
    mount(&server, "/sync", ResponseTemplate::new(302).insert_header("location", "https://elsewhere.example/")).await;
    let failed = matrix(tmp.path(), &server.uri()).sync(&Heard::default()).await.unwrap_err();
    assert!(matches!(failed, ChannelError::Transient(ref why) if why.contains("elsewhere.example")), "{failed:?}");

    let server = MockServer::start().await;
    let forbidden = json!({"errcode": "M_FORBIDDEN", "error": "no \u{1b}]0;PWNED\u{7}\u{1b}[31mentry"});
    mount(&server, "/sync", ResponseTemplate::new(403).set_body_json(forbidden)).await;
    let failed = matrix(tmp.path(), &server.uri()).sync(&Heard::default()).await.unwrap_err();
    let ChannelError::Transient(why) = failed else { panic!("{failed:?}") };
    assert!(why.contains("M_FORBIDDEN no entry") && !why.contains('\u{1b}'), "{why}");
}

/// `/stop` as a reply to one of Raven's nudges (its quoted fallback included) is aimed at it;
/// a reply to another event, or other words, go as they are.
#[actix_rt::test]
async fn ok_or_stop_sent_as_a_reply_to_a_nudge_is_aimed_at_that_nudge() {
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(tmp.path(), "http://127.0.0.1:9");
    m.saved().nudges.push(("$nudge".into(), "3fa2c1".into()));
    let heard = Heard::default();
    let reply = |n: u32, body: &str, to: &str| {
        json!({"event_id": format!("$r{n}"), "type": "m.room.message", "sender": "@me:fake",
            "content": {"msgtype": "m.text", "body": body, "m.relates_to": {"m.in_reply_to": {"event_id": to}}}})
    };
    let events = [
        reply(1, "> <@raven:fake> Heads-up: the dentist\n\n/stop", "$nudge"),
        reply(2, "/OK", "$nudge"),
        reply(3, "/stop", "$someone-else"),
        reply(4, "thanks", "$nudge"),
    ];
    for e in &events {
        m.handle(e, &heard).await.unwrap();
    }
    assert_eq!(*heard.0.lock().unwrap(), ["/stop [3fa2c1]", "/ok [3fa2c1]", "/stop", "thanks"]);
}
