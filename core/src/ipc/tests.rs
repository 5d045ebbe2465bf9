use super::*;
use futures_util::future::LocalBoxFuture;
use raven_proto::control::{ControlRequest, ControlResponse};
use std::rc::Rc;

struct Pongs;

impl ControlHandler for Pongs {
    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        Box::pin(async move {
            match req {
                ControlRequest::Ping => ControlResponse::Pong { pid: std::process::id() },
                ControlRequest::Status => ControlResponse::Status {
                    pid: std::process::id(),
                    actors: Vec::new(),
                    upcoming: Vec::new(),
                    llm: None,
                },
                other => ControlResponse::Error { message: format!("not served here: {other:?}") },
            }
        })
    }
}

async fn server(path: &std::path::Path) {
    let listener = bind(path).await.unwrap();
    actix_rt::spawn(serve(listener, Rc::new(Pongs), path.to_owned()));
}

#[actix_rt::test]
async fn a_request_is_answered_and_the_socket_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run/raven.sock");
    server(&path).await;
    let mut c = ControlClient::connect(&path).await.unwrap();
    assert_eq!(c.server_pid(), Some(std::process::id()));
    assert_eq!(c.request(ControlRequest::Ping).await.unwrap(), ControlResponse::Pong { pid: std::process::id() });
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    }
}

#[actix_rt::test]
async fn garbage_and_a_4_gib_prefix_close_only_their_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    server(&path).await;
    let mut good = ControlClient::connect(&path).await.unwrap();
    let mut bad = ControlClient::connect(&path).await.unwrap();
    bad.send_raw(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8]).await.unwrap();
    assert!(bad.request(ControlRequest::Ping).await.is_err(), "the garbage connection is closed");
    assert!(matches!(good.request(ControlRequest::Ping).await.unwrap(), ControlResponse::Pong { .. }));
    let mut huge = ControlClient::connect(&path).await.unwrap();
    huge.send_raw(&u32::MAX.to_be_bytes()).await.unwrap();
    assert!(huge.request(ControlRequest::Ping).await.is_err(), "the 4 GiB prefix connection is closed");
    assert!(matches!(good.request(ControlRequest::Status).await.unwrap(), ControlResponse::Status { .. }));
}

#[actix_rt::test]
async fn a_stale_socket_is_replaced_and_a_live_one_refused_with_its_pid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    // A socket file nobody listens on, as a killed supervisor leaves it.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    server(&path).await;
    let err = bind(&path).await.unwrap_err();
    assert!(matches!(err, IpcError::AlreadyRunning { pid, .. } if pid == std::process::id()), "{err}");
    assert!(err.to_string().starts_with(&format!("already running (pid {})", std::process::id())));
}

#[actix_rt::test]
async fn a_client_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    server(&path).await;
    let mut c = ControlClient::connect(&path).await.unwrap();
    let mut other = raven_proto::wire::Hello::new("old");
    other.version += 1;
    // A fresh connection speaking another version gets no greeting back.
    use interprocess::local_socket::tokio::{prelude::*, Stream};
    let name = path.as_path().to_fs_name::<interprocess::local_socket::GenericFilePath>().unwrap();
    let s = Stream::connect(name).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    (&s).write_all(&raven_proto::wire::encode_frame(&other, raven_proto::wire::MAX_FRAME).unwrap()).await.unwrap();
    let mut buf = [0u8; 64];
    assert_eq!((&s).read(&mut buf).await.unwrap(), 0, "closed without an answer");
    assert!(c.request(ControlRequest::Ping).await.is_ok(), "others unaffected");
}

#[actix_rt::test]
async fn the_owner_of_the_socket_is_served_and_another_uid_would_not_be() {
    use interprocess::local_socket::tokio::{prelude::*, Stream};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    let listener = bind(&path).await.unwrap();
    let name = path.as_path().to_fs_name::<interprocess::local_socket::GenericFilePath>().unwrap();
    let (client, accepted) = futures_util::future::join(Stream::connect(name), listener.accept()).await;
    let (_client, accepted) = (client.unwrap(), accepted.unwrap());
    let me = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&path).unwrap());
    assert!(server::peer_allowed(&accepted, Some(me)).is_ok());
    let err = server::peer_allowed(&accepted, Some(me + 1)).unwrap_err().to_string();
    assert!(err.contains(&format!("peer uid {me}")), "{err}");
}

/// Answers `Tick` only when told to, and pushes the bus's events.
struct Pushing {
    bus: EventBus,
    release: Rc<tokio::sync::Notify>,
}

impl ControlHandler for Pushing {
    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        let release = self.release.clone();
        Box::pin(async move {
            match req {
                ControlRequest::Tick => {
                    release.notified().await;
                    ControlResponse::Ticked { route: "done".into(), cli_messages: vec![], detail: vec![] }
                }
                _ => ControlResponse::Pong { pid: std::process::id() },
            }
        })
    }

    fn subscribe(&self) -> Option<tokio::sync::mpsc::Receiver<String>> {
        Some(self.bus.subscribe(EVENT_QUEUE))
    }
}

#[actix_rt::test]
async fn events_are_pushed_and_requests_answered_while_a_long_request_is_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    let (bus, release) = (EventBus::default(), Rc::new(tokio::sync::Notify::new()));
    let listener = bind(&path).await.unwrap();
    let handler = Rc::new(Pushing { bus: bus.clone(), release: release.clone() });
    actix_rt::spawn(serve(listener, handler, path.clone()));
    let (client, mut events) = ControlClient::connect(&path).await.unwrap().into_duplex();
    assert_eq!(client.request(ControlRequest::Subscribe).await.unwrap(), ControlResponse::Subscribed);
    let client = Rc::new(client);
    let c = client.clone();
    let long = actix_rt::spawn(async move { c.request(ControlRequest::Tick).await.unwrap() });
    // While the tick waits: a second request is answered and an event arrives.
    assert!(matches!(client.request(ControlRequest::Ping).await.unwrap(), ControlResponse::Pong { .. }));
    assert_eq!(bus.publish("[raven ⏰] stretch"), 1);
    assert_eq!(events.recv().await.unwrap(), Pushed::Event("[raven ⏰] stretch".into()));
    assert!(!long.is_finished());
    release.notify_one();
    assert!(matches!(long.await.unwrap(), ControlResponse::Ticked { .. }));
    // A plain client of a server without events is told so.
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join("raven.sock");
    server(&path).await;
    let (plain, _) = ControlClient::connect(&path).await.unwrap().into_duplex();
    assert!(matches!(plain.request(ControlRequest::Subscribe).await.unwrap(), ControlResponse::Error { .. }));
}

/// Answers a `Send` with its own text, so a reply shows which request it answers.
struct Echoes;

impl ControlHandler for Echoes {
    fn handle(&self, req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        Box::pin(async move {
            match req {
                ControlRequest::Send { text, .. } => ControlResponse::Sent { delivered: true, detail: text },
                _ => ControlResponse::Pong { pid: std::process::id() },
            }
        })
    }
}

#[actix_rt::test]
async fn concurrent_large_requests_on_one_client_never_interleave_their_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    let listener = bind(&path).await.unwrap();
    actix_rt::spawn(serve(listener, Rc::new(Echoes), path.clone()));
    let (client, _events) = ControlClient::connect(&path).await.unwrap().into_duplex();
    let client = Rc::new(client);
    // Each frame is far larger than the socket's buffer: a write yields halfway.
    let tasks: Vec<_> = (0..16u8)
        .map(|i| {
            let c = client.clone();
            let text = char::from(b'a' + i).to_string().repeat(400 * 1024);
            actix_rt::spawn(async move {
                let req = ControlRequest::Send { target: "cli:local".into(), text: text.clone() };
                (c.request(req).await, text)
            })
        })
        .collect();
    for t in tasks {
        // Interleaved frames would leave the server waiting on a bogus length: bounded here.
        let (answer, text) = actix_rt::time::timeout(std::time::Duration::from_secs(20), t)
            .await
            .expect("a request got no answer: its frame was torn")
            .unwrap();
        match answer {
            Ok(ControlResponse::Sent { detail, .. }) => assert!(detail == text, "a reply to another request"),
            other => panic!("a request failed: {:?}", other.map(|_| ())),
        }
    }
}

/// Answers each request after a short while, so a burst of clients holds every slot at once.
struct Slow;

impl ControlHandler for Slow {
    fn handle(&self, _req: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            ControlResponse::Pong { pid: std::process::id() }
        })
    }
}

#[actix_rt::test]
async fn a_burst_of_clients_past_every_slot_waits_its_turn_and_each_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raven.sock");
    let listener = bind(&path).await.unwrap();
    actix_rt::spawn(serve(listener, Rc::new(Slow), path.clone()));
    let clients = limits::MAX_CONNECTIONS + limits::KEPT_FOR_LONG_LIVED + 64;
    let asked: Vec<_> = (0..clients)
        .map(|_| {
            let path = path.clone();
            actix_rt::spawn(async move {
                let mut c = ControlClient::connect(&path).await.map_err(|e| e.to_string())?;
                c.request(ControlRequest::Ping).await.map_err(|e| e.to_string())
            })
        })
        .collect();
    let mut unanswered = Vec::new();
    for a in asked {
        match a.await.unwrap() {
            Ok(ControlResponse::Pong { .. }) => {}
            other => unanswered.push(format!("{other:?}")),
        }
    }
    assert!(unanswered.is_empty(), "{} of {clients} not answered: {:?}", unanswered.len(), unanswered.first());
}
