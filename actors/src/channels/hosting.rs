//! How the gateway runs its adapters: each one's listening loop under its own supervision (a
//! loop that fails waits and starts again, doubling its pause, or 1 s while the supervisor
//! does not answer; one that panics is counted and started again), and each one's sending behind [`Hosted`], where a panic is a failed
//! delivery the outbox retries. One adapter's trouble never reaches another.
//! `RAVEN_FAULT=channel:<name>:<n>` makes the n-th run of a channel's loop panic as it starts
//! (`<n>+`: every run from the n-th on).

use super::health::HealthBoard;
use super::{Adapter, ChannelError, Inbox};
use crate::delivery::outlets::{Outlet, OutletError};
use crate::supervise::restart::{keep_running, Ended};
use crate::supervise::RestartPolicy;
use futures_util::future::LocalBoxFuture;
use futures_util::FutureExt;
use raven_proto::OutboundText;
use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FIRST_PAUSE: Duration = Duration::from_millis(200);
const MAX_PAUSE: Duration = Duration::from_secs(30);
/// A run that lasted this long was healthy: the next failure starts from the first pause.
const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// After the supervisor did not take what the user said (it is restarting, most likely).
const INBOX_PAUSE: Duration = Duration::from_secs(1);

/// Delivery ids remembered as sent or refused.
const SETTLED_KEPT: usize = 10_000;

/// An adapter as the outlet the gateway hands deliveries to. A delivery the supervisor gave
/// up waiting for (a long 429, a slow mail server, a send whose answer never came) may still
/// finish here: its retry is answered from what became of it (sent, or refused for good),
/// never sent a second time.
pub struct Hosted {
    adapter: Arc<dyn Adapter>,
    health: HealthBoard,
    flights: Mutex<Flights>,
}

/// The deliveries being sent now, and what became of those settled lately (sent, or refused
/// for good).
#[derive(Default)]
struct Flights {
    sending: HashSet<String>,
    settled: HashMap<String, Result<(), OutletError>>,
    settled_order: VecDeque<String>,
}

impl Flights {
    fn finished(&mut self, id: &str, outcome: &Result<(), OutletError>) {
        self.sending.remove(id);
        let settled = matches!(outcome, Ok(()) | Err(OutletError::Refused(_)));
        if settled && self.settled.insert(id.to_owned(), outcome.clone()).is_none() {
            self.settled_order.push_back(id.to_owned());
            if self.settled_order.len() > SETTLED_KEPT {
                let old = self.settled_order.pop_front().unwrap_or_default();
                self.settled.remove(&old);
            }
        }
    }
}

impl Hosted {
    pub fn new(adapter: Arc<dyn Adapter>, health: HealthBoard) -> Self {
        health.ok(adapter.channel());
        Hosted { adapter, health, flights: Mutex::new(Flights::default()) }
    }

    fn flights(&self) -> std::sync::MutexGuard<'_, Flights> {
        self.flights.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Outlet for Hosted {
    fn channel(&self) -> &str {
        self.adapter.channel()
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(async move {
            let name = self.adapter.channel();
            let id = text.delivery_id.as_str();
            {
                let mut f = self.flights();
                if let Some(outcome) = f.settled.get(id) {
                    return outcome.clone();
                }
                if !f.sending.insert(id.to_owned()) {
                    return Err(OutletError::Transient(format!("still being sent on {name}")));
                }
            }
            let sent = AssertUnwindSafe(self.adapter.deliver(text)).catch_unwind().await;
            match &sent {
                Ok(outcome) => self.flights().finished(id, outcome),
                Err(_) => self.flights().finished(id, &Err(OutletError::Transient(String::new()))),
            }
            match sent {
                Ok(Ok(())) => self.health.sent(name),
                Ok(Err(ref e)) => self.health.send_failed(name, &e.to_string()),
                Err(_) => {
                    self.health.update(name, |h| h.restarts += 1);
                    self.health.send_failed(name, "the adapter panicked while sending");
                }
            }
            sent.unwrap_or_else(|_| Err(OutletError::Transient(format!("the {name} adapter failed while sending"))))
        })
    }
}

/// How a channel's listening loop is started again: after 200 ms doubling to 30 s, from the
/// start again after a healthy minute.
fn policy(name: &str) -> RestartPolicy {
    RestartPolicy {
        backoff_initial: FIRST_PAUSE,
        backoff_max: MAX_PAUSE,
        healthy_run: Some(HEALTHY_RUN),
        ..RestartPolicy::default()
    }
    .with_fault_from_env(&format!("channel:{name}"))
}

/// Runs `adapter`'s listening loop for ever, started again whenever it ends.
pub async fn supervise(adapter: Arc<dyn Adapter>, inbox: Rc<dyn Inbox>, health: HealthBoard) {
    let name = adapter.channel().to_owned();
    let mut failures = 0u32;
    let run = || adapter.listen(&*inbox);
    let after = |ended: Ended<Result<(), ChannelError>>, pause: Duration| {
        // The doubling is at its first pause after the first run and after a healthy one:
        // failures in a row count from there.
        if pause == FIRST_PAUSE {
            failures = 0;
        }
        Some(match ended {
            Ended::Returned(Ok(())) => {
                tracing::warn!(channel = %name, "the channel stopped listening; starting it again");
                pause
            }
            Ended::Returned(Err(e)) => {
                failures += 1;
                let wait = match e {
                    // Retrying soon will not help until the settings change.
                    ChannelError::Config(_) | ChannelError::Refused(_) => MAX_PAUSE,
                    // The supervisor is restarting: it is back within a second or two.
                    ChannelError::Inbox(_) => INBOX_PAUSE,
                    ChannelError::Transient(_) => pause,
                };
                if failures == 1 {
                    tracing::warn!(channel = %name, "the channel failed: {e}; trying again in {wait:?}");
                } else {
                    tracing::debug!(channel = %name, "the channel failed again ({failures} in a row): {e}");
                }
                health.failing(&name, &e.to_string());
                wait
            }
            Ended::Panicked => {
                tracing::error!(channel = %name, "the channel panicked; starting it again");
                health.update(&name, |h| {
                    h.state = "restarting".into();
                    h.restarts += 1;
                    h.last_error = Some("the adapter panicked".into());
                });
                pause
            }
        })
    };
    keep_running(&format!("channel {name}"), &policy(&name), run, after).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its sends; fails the ones whose text says so.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Outlet for Counting {
        fn channel(&self) -> &str {
            "counting"
        }
        fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let (failed, refused) = (text.content.contains("fail"), text.content.contains("refuse"));
            Box::pin(async move {
                match (failed, refused) {
                    (true, _) => Err(OutletError::Transient("down".into())),
                    (_, true) => Err(OutletError::Refused("may have been delivered".into())),
                    _ => Ok(()),
                }
            })
        }
    }

    impl Adapter for Counting {
        fn test<'a>(&'a self) -> LocalBoxFuture<'a, Result<String, ChannelError>> {
            Box::pin(async { Ok(String::new()) })
        }
    }

    #[actix_rt::test]
    async fn a_delivery_sent_once_is_never_sent_again_and_a_failed_one_is() {
        let tmp = tempfile::tempdir().unwrap();
        let adapter = Arc::new(Counting::default());
        let hosted = Hosted::new(adapter.clone(), HealthBoard::new(&crate::data_dir::DataDir::new(tmp.path())));
        let text = OutboundText::proactive("d1", "counting", "me", "hello");
        assert_eq!(hosted.deliver(&text).await, Ok(()));
        assert_eq!(hosted.deliver(&text).await, Ok(()), "the retry of a delivery that went out");
        assert_eq!(adapter.0.load(Ordering::SeqCst), 1, "sent once");
        let failing = OutboundText::proactive("d2", "counting", "me", "fail");
        assert!(hosted.deliver(&failing).await.is_err());
        assert!(hosted.deliver(&failing).await.is_err());
        assert_eq!(adapter.0.load(Ordering::SeqCst), 3, "a failed delivery is tried again");
    }

    #[actix_rt::test]
    async fn the_retry_of_a_refused_delivery_gets_the_same_refusal_and_sends_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let adapter = Arc::new(Counting::default());
        let hosted = Hosted::new(adapter.clone(), HealthBoard::new(&crate::data_dir::DataDir::new(tmp.path())));
        let text = OutboundText::proactive("d1", "counting", "me", "refuse");
        let refused = Err(OutletError::Refused("may have been delivered".into()));
        assert_eq!(hosted.deliver(&text).await, refused);
        assert_eq!(hosted.deliver(&text).await, refused, "a retry after its caller gave up waiting");
        assert_eq!(adapter.0.load(Ordering::SeqCst), 1, "tried once");
    }
}
