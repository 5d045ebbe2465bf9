//! A small HTTP/1.1 server on 127.0.0.1 for the services a channel talks to (the Telegram Bot
//! API, an ntfy server): each request (method, path, JSON body) is recorded and answered by
//! the test's handler, one connection a request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub body: serde_json::Value,
    pub headers: Vec<(String, String)>,
    /// When it had arrived in full.
    pub at: std::time::Instant,
}

/// `(status, JSON body)` for a request.
pub type Handler = dyn Fn(&Seen) -> (u16, String) + Send + Sync;

pub struct FakeHttp {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeHttp {
    pub fn start(handler: Arc<Handler>) -> FakeHttp {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &*handler, &log);
                });
            }
        });
        FakeHttp { url, seen }
    }

    /// The requests so far whose path ends with `suffix`.
    pub fn requests(&self, suffix: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path.ends_with(suffix)).cloned().collect()
    }
}

fn serve(stream: std::net::TcpStream, handler: &Handler, log: &Mutex<Vec<Seen>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or_default().to_owned(), parts.next().unwrap_or_default().to_owned());
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_owned());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let seen = Seen { method, path, body, headers, at: std::time::Instant::now() };
    log.lock().unwrap().push(seen.clone());
    let (status, answer) = handler(&seen);
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}
