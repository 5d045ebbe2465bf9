//! Outlets hosted by the gateway process (spec: the gateway owns the channels that face the
//! outside). In the supervisor a [`RemoteOutlet`] stands for each such channel: a delivery is
//! pushed to the gateway over its control connection and waits for the gateway's answer.
//! With no gateway connected the delivery is a transient failure, so the DeliveryHub keeps it
//! in the outbox and retries it once the gateway is back.

use super::outlets::{Outlet, OutletError};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Deliveries waiting to be pushed to the gateway.
pub const DELIVER_QUEUE: usize = 64;

type Answer = oneshot::Receiver<Result<(), OutletError>>;
type ToGateway = mpsc::Sender<(u64, OutboundText)>;

#[derive(Default)]
struct Link {
    to_gateway: Option<ToGateway>,
    next_id: u64,
    waiting: HashMap<u64, oneshot::Sender<Result<(), OutletError>>>,
}

/// The supervisor's end of the gateway connection; shared by every RemoteOutlet.
#[derive(Clone, Default)]
pub struct GatewayLink(Arc<Mutex<Link>>);

impl GatewayLink {
    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A gateway connected: deliveries go to it from now on (a newer connection replaces an
    /// older one; what the old one still owed fails and is retried from the outbox).
    pub fn attach(&self) -> mpsc::Receiver<(u64, OutboundText)> {
        let (tx, rx) = mpsc::channel(DELIVER_QUEUE);
        let mut l = self.lock();
        l.to_gateway = Some(tx);
        l.waiting.clear();
        rx
    }

    /// The gateway's answer for delivery `id`.
    pub fn resolve(&self, id: u64, result: Result<(), OutletError>) {
        if let Some(tx) = self.lock().waiting.remove(&id) {
            let _ = tx.send(result);
        }
    }

    #[cfg(test)]
    pub fn connected(&self) -> bool {
        self.lock().to_gateway.as_ref().is_some_and(|t| !t.is_closed())
    }

    /// Registers a delivery: its id, the answer to wait for, and the connection to send it on.
    fn register(&self) -> Result<(u64, Answer, ToGateway), OutletError> {
        let mut l = self.lock();
        let Some(tx) = l.to_gateway.clone().filter(|t| !t.is_closed()) else {
            return Err(OutletError::Transient("the gateway is not connected".into()));
        };
        l.next_id += 1;
        let id = l.next_id;
        let (done, wait) = oneshot::channel();
        l.waiting.insert(id, done);
        drop(l);
        Ok((id, wait, tx))
    }
}

pub struct RemoteOutlet {
    pub channel: String,
    pub link: GatewayLink,
    /// How long the gateway may take (its own retries included) before the delivery counts
    /// as failed for now.
    pub timeout: Duration,
}

impl Outlet for RemoteOutlet {
    fn channel(&self) -> &str {
        &self.channel
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        let pushed = self.link.register();
        Box::pin(async move {
            let (id, wait, connection) = pushed?;
            // A burst waits for room in the queue (within the timeout) rather than failing
            // over to the outbox, which would only retry it later and grow meanwhile.
            let queued = tokio::time::timeout(self.timeout, connection.send((id, text.clone()))).await;
            if !matches!(queued, Ok(Ok(()))) {
                self.link.lock().waiting.remove(&id);
                return Err(OutletError::Transient("the gateway did not take the delivery".into()));
            }
            let gone = || OutletError::Transient("the gateway went away before answering".into());
            tokio::select! {
                // An answer sent just before the connection closed still counts.
                biased;
                answer = wait => answer.unwrap_or_else(|_| Err(gone())),
                // Its connection closed: no answer is coming.
                _ = connection.closed() => Err(gone()),
                _ = tokio::time::sleep(self.timeout) => {
                    Err(OutletError::Transient(format!("the gateway did not answer within {:?}", self.timeout)))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> OutboundText {
        OutboundText::proactive("d1", "webhook", "me", "hello")
    }

    #[actix_rt::test]
    async fn a_delivery_waits_for_the_gateway_s_answer_and_fails_over_to_the_outbox_without_one() {
        let link = GatewayLink::default();
        let outlet = RemoteOutlet { channel: "webhook".into(), link: link.clone(), timeout: Duration::from_secs(5) };
        let t = text();
        let none = outlet.deliver(&t).await.unwrap_err();
        assert!(matches!(none, OutletError::Transient(ref m) if m.contains("not connected")), "{none:?}");
        let mut gateway = link.attach();
        let l = link.clone();
        actix_rt::spawn(async move {
            let (id, got) = gateway.recv().await.unwrap();
            assert_eq!(got.content, "hello");
            l.resolve(id, Err(OutletError::Refused("400 from the webhook".into())));
            let (id, _) = gateway.recv().await.unwrap();
            l.resolve(id, Ok(()));
        });
        assert_eq!(outlet.deliver(&t).await, Err(OutletError::Refused("400 from the webhook".into())));
        assert_eq!(outlet.deliver(&t).await, Ok(()));
        // The gateway's connection is gone: transient again.
        actix_rt::time::sleep(Duration::from_millis(5)).await;
        assert!(!link.connected());
        assert!(matches!(outlet.deliver(&t).await, Err(OutletError::Transient(_))));
    }
}
