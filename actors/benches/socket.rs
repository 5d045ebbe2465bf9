//! Control-socket round trip (handshake done, one Ping → Pong) against a raw Unix stream
//! ping-pong of the same frame bytes in the same run: p50 of each and the ratio.

use futures_util::future::LocalBoxFuture;
use raven_actors::ipc::{bind, serve, ControlClient, ControlHandler};
use raven_proto::control::{ClientFrame, ControlRequest, ControlResponse};
use raven_proto::wire::{encode_frame, MAX_FRAME};
use std::rc::Rc;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ROUNDS: usize = 5_000;

struct Pong;

impl ControlHandler for Pong {
    fn handle(&self, _: ControlRequest) -> LocalBoxFuture<'static, ControlResponse> {
        Box::pin(async { ControlResponse::Pong { pid: 1 } })
    }
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("raven-bench-socket-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (ours, raw) = actix_rt::System::new().block_on(async {
        let path = dir.join("raven.sock");
        let listener = bind(&path).await.unwrap();
        actix_rt::spawn(serve(listener, Rc::new(Pong), path.clone()));
        let mut c = ControlClient::connect(&path).await.unwrap();
        let mut ours = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            c.request(ControlRequest::Ping).await.unwrap();
            ours.push(t.elapsed().as_secs_f64() * 1e6);
        }

        // Baseline: an echo server on a plain Unix stream, the same frame each way.
        let raw_path = dir.join("raw.sock");
        let raw_listener = tokio::net::UnixListener::bind(&raw_path).unwrap();
        actix_rt::spawn(async move {
            let (mut s, _) = raw_listener.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                s.write_all(&buf[..n]).await.unwrap();
            }
        });
        let frame = encode_frame(&ClientFrame { id: 1, request: ControlRequest::Ping }, MAX_FRAME).unwrap();
        let mut s = tokio::net::UnixStream::connect(&raw_path).await.unwrap();
        let mut back = vec![0u8; frame.len()];
        let mut raw = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            s.write_all(&frame).await.unwrap();
            s.read_exact(&mut back).await.unwrap();
            raw.push(t.elapsed().as_secs_f64() * 1e6);
        }
        (p50(ours), p50(raw))
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!("{:<52} {:>10}", "benchmark", "p50");
    println!("{:<52} {:>7.1} us", "control socket request/response (Ping)", ours);
    println!("{:<52} {:>7.1} us", "baseline: raw Unix stream ping-pong, same frame", raw);
    println!("{:<52} {:>10.2}", "ratio", ours / raw);
    println!("target: ratio <= 2");
}
