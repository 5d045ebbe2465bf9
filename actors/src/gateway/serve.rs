//! The gateway's accept loop: a bounded number of connections, each with a deadline for its
//! request head (its body's deadline is the app's, see [`super::limits`]), so a client that
//! sends half a request (or thousands of them) holds a slot for a few seconds and never
//! starves the others or the process's descriptors.

use super::limits::Limits;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Serves `app` on `listener` within `limits`; it goes on through failed accepts.
pub(super) async fn serve(listener: TcpListener, app: Router, limits: Limits) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::debug!("gateway: {} connections open; one more closed", limits.max_connections);
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        actix_rt::spawn(async move {
            let _slot = slot;
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!("gateway: connection ended: {e}");
            }
        });
    }
}
