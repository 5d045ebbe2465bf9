//! A test model: an OpenAI-compatible `/chat/completions` on 127.0.0.1 that keeps every
//! request body it was sent and answers each with a fixed text (or a body of a given size).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

pub struct FakeModel {
    pub addr: String,
    requests: Arc<Mutex<Vec<serde_json::Value>>>,
}

/// What every request is answered with.
#[derive(Clone)]
pub enum Answer {
    Text(String),
    /// A reply body of this many bytes (a JSON string padded with `x`).
    Huge(usize),
}

impl FakeModel {
    pub fn start(answer: Answer) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, answer) = (kept.clone(), answer.clone());
                std::thread::spawn(move || serve(stream, &kept, &answer));
            }
        });
        FakeModel { addr, requests }
    }

    /// `base_url` for `[llm]`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests whose last user message is `text` (the agent's turn on it).
    pub fn turns_on(&self, text: &str) -> Vec<serde_json::Value> {
        self.requests()
            .into_iter()
            .filter(|r| {
                let messages = r["messages"].as_array().cloned().unwrap_or_default();
                messages.iter().rev().find(|m| m["role"] == "user").is_some_and(|m| m["content"] == text)
            })
            .collect()
    }
}

fn serve(stream: TcpStream, kept: &Mutex<Vec<serde_json::Value>>, answer: &Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some(body) = read_request(&mut reader) {
        kept.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or_default());
        if answer_with(&mut out, answer).is_err() {
            return;
        }
    }
}

/// One request's body; `None` when the connection ends.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn answer_with(out: &mut TcpStream, answer: &Answer) -> std::io::Result<()> {
    let (head, tail) = (r#"{"choices": [{"message": {"role": "assistant", "content": ""#, r#""}}]}"#);
    let text = match answer {
        Answer::Text(t) => {
            let reply = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": t}}]}).to_string();
            return respond(out, reply.len(), &mut std::iter::once(reply.into_bytes()));
        }
        Answer::Huge(n) => n.saturating_sub(head.len() + tail.len()),
    };
    // Sent in 1 MiB pieces: the client may stop reading (and close) at any point.
    let mut pieces = std::iter::once(head.as_bytes().to_vec())
        .chain((0..text).step_by(1 << 20).map(move |i| vec![b'x'; (text - i).min(1 << 20)]))
        .chain(std::iter::once(tail.as_bytes().to_vec()));
    respond(out, head.len() + text + tail.len(), &mut pieces)
}

fn respond(out: &mut TcpStream, length: usize, pieces: &mut dyn Iterator<Item = Vec<u8>>) -> std::io::Result<()> {
    write!(out, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n")?;
    for p in pieces {
        out.write_all(&p)?;
    }
    Ok(())
}
