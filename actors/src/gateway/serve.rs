//! The gateway's accept loop: a bounded number of connections ([`super::slots`]: an idle one
//! makes room for a newer one), each with a deadline for its request head (its body's deadline
//! is the app's, see [`super::limits`]), so a client that sends half a request (or thousands of
//! them) holds a slot for a few seconds at most, never keeps a complete request out, and never
//! exhausts the process's descriptors.

use super::limits::Limits;
use super::slots::{Evicted, Held, Slots};
use axum::Router;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::rc::Rc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// Serves `app` on `listener` within `limits`; it goes on through failed accepts.
pub(super) async fn serve(listener: TcpListener, app: Router, limits: Limits) {
    let slots = Slots::new(limits.max_connections);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, say: wait for some to close rather than spin.
                tracing::warn!("gateway: accept failed: {e}");
                actix_rt::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some((held, evicted)) = slots.admit() else {
            tracing::debug!(
                "gateway: {} requests are being served; one more connection closed",
                limits.max_connections
            );
            continue;
        };
        actix_rt::spawn(connection(stream, app.clone(), limits, held, evicted));
    }
}

/// One connection, served until it ends or is closed to make room for a newer one.
async fn connection(stream: TcpStream, app: Router, limits: Limits, held: Held, evicted: Evicted) {
    let held = Rc::new(held);
    let app = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let serving = held.serving();
        let answer = app.call(request);
        async move {
            let answer = answer.await;
            drop(serving);
            answer
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        served = served => if let Err(e) = served {
            tracing::debug!("gateway: connection ended: {e}");
        },
        _ = evicted => tracing::debug!("gateway: an idle connection closed to make room for a newer one"),
    }
}
