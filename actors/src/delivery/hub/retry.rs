//! The outbox's retries: every entry that is due, and at once what waits for a channel
//! someone just started watching. A late delivery goes through the gate again; one for a
//! terminal no one watches goes to the user's chat channel once there is one.

use super::{backoff_after, record_said, DeliveryHubService, OutboxEntry, OutboxStore};
use crate::delivery::conversation::Conversations;
use crate::delivery::outbox::Settled;
use crate::delivery::outlets::{Outlet, OutletError};
use crate::delivery::watched::Watched;
use crate::journal::Journal;
use crate::policy::{release, NudgePolicyService, Reservation, Reserve};
use crate::store::db::off_thread;
use crate::store::StoreError;
use crate::supervise::{Handle, LocalBoxFuture, Request, ServeAsync};
use chrono::{DateTime, Duration, Utc};
use raven_proto::OutboundText;
use std::collections::HashMap;
use std::sync::Arc;

/// Retry every outbox entry that is due.
pub struct RetryOutbox;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryReport {
    pub delivered: usize,
    pub still_queued: usize,
}

impl Request for RetryOutbox {
    type Reply = Result<RetryReport, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<RetryOutbox> for DeliveryHubService {
    fn serve_async(&mut self, _: RetryOutbox) -> LocalBoxFuture<'static, Result<RetryReport, StoreError>> {
        let pass = Pass::of(self);
        Box::pin(async move {
            // Nothing due: read, not locked, not written.
            if !pass.has_work().await? {
                return Ok(RetryReport::default());
            }
            // Lease the due entries in one step, deliver outside it, settle in another.
            let leased = pass.lease().await?;
            let results = pass.deliver(&leased).await;
            pass.settle(&leased, &results).await
        })
    }
}

/// Each entry as tried (routed to a chat channel, for an unwatched terminal; its delivery id
/// stays) and how.
type Tried = Vec<(OutboundText, Result<Delivered, OutletError>)>;

/// One retry pass, with what it needs of the hub as it was when the pass began.
struct Pass {
    outlets: HashMap<String, Arc<dyn Outlet>>,
    watched: Watched,
    sent: super::sent::SentLately,
    policy: Option<Handle<NudgePolicyService>>,
    conversations: Option<Conversations>,
    store: Arc<dyn OutboxStore>,
    journal: Journal,
    now: DateTime<Utc>,
    /// The first wait after a failed try, and the longest.
    backoff: (Duration, Duration),
}

impl Pass {
    fn of(hub: &DeliveryHubService) -> Self {
        Pass {
            outlets: hub.outlets.clone(),
            watched: hub.watched.clone(),
            sent: hub.sent.clone(),
            policy: hub.policy.clone(),
            conversations: hub.conversations.clone(),
            store: hub.store.clone(),
            journal: hub.journal.clone(),
            now: hub.clock.now(),
            backoff: (hub.backoff, hub.max_backoff),
        }
    }

    async fn has_work(&self) -> Result<bool, StoreError> {
        let (store, now) = (self.store.clone(), self.now);
        off_thread(move || store.has_work(now)).await
    }

    /// In one step: expires what waited too long (each burial a journal line) and leases
    /// every due entry no live lease holds, for five minutes.
    async fn lease(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let (store, now, pid) = (self.store.clone(), self.now, std::process::id());
        let until = now + Duration::minutes(5);
        let leased = off_thread(move || store.lease(now, pid, until)).await?;
        for d in &leased.buried {
            self.journal.record(now, source_of(&d.entry), d.entry.journal_event("dead_letter", Some(d.why.clone())));
        }
        Ok(leased.due)
    }

    /// Outside any transaction: each leased entry tried in turn, and what went out now written into
    /// its conversation and the journal.
    async fn deliver(&self, leased: &[OutboxEntry]) -> Tried {
        let mut results = Vec::new();
        for e in leased {
            results.push(deliver_late(&self.outlets, &self.watched, &self.sent, self.policy.as_ref(), e).await);
        }
        for (e, (went, r)) in leased.iter().zip(&results) {
            match r {
                Ok(Delivered::Now) => {
                    record_said(&self.conversations, &e.said, self.outlets.get(&went.channel), went, self.now)
                }
                Ok(Delivered::Before) => {}
                Err(_) => continue,
            }
            let went = OutboxEntry { text: went.clone(), ..e.clone() };
            self.journal.record(
                self.now,
                source_of(e),
                went.journal_event("delivered", Some(attempts_said(e.attempts))),
            );
        }
        results
    }

    /// In one step: a delivered entry leaves the outbox, a refused one becomes a dead letter,
    /// a failed one waits for its next attempt; an entry this pass did not try stays.
    async fn settle(&self, leased: &[OutboxEntry], results: &Tried) -> Result<RetryReport, StoreError> {
        let (now, (base, max)) = (self.now, self.backoff);
        let mut report = RetryReport::default();
        let mut tries = Vec::new();
        for (e, (tried, r)) in leased.iter().zip(results) {
            // What was routed to a chat channel waits for (or is buried by) it.
            let mut e = OutboxEntry { text: tried.clone(), lease: None, ..e.clone() };
            tries.push(match r {
                Ok(_) => {
                    report.delivered += 1;
                    Settled::Delivered(e)
                }
                Err(OutletError::Refused(why)) => {
                    self.journal.record(now, source_of(&e), e.journal_event("dead_letter", Some(why.clone())));
                    Settled::Refused(e, why.clone())
                }
                Err(err) => {
                    e.attempts += 1;
                    e.last_error =
                        raven_proto::limits::cut(&err.to_string(), raven_proto::limits::ERROR_TEXT_BYTES).into_owned();
                    e.next_attempt_at = now + backoff_after(e.attempts - 1, base, max);
                    Settled::Failed(e)
                }
            });
        }
        let store = self.store.clone();
        let left = off_thread(move || store.settle(tries, now).and_then(|()| store.levels())).await?;
        report.still_queued = left.waiting as usize;
        Ok(report)
    }
}

/// The source of a waiting message, for its journal lines.
fn source_of(e: &OutboxEntry) -> Option<&'static str> {
    e.said.as_ref().map(|d| d.source.name())
}

/// A late delivery goes through the gate again, as every send does: reserved (checked and
/// charged in one step), delivered, and given back if the outlet fails. One the gate holds
/// back now waits with the rest, until it expires. A message for a terminal no one watches
/// goes to the user's chat channel, if one is set up by now (see [`Watched`]). The message as
/// tried, and how it went.
async fn deliver_late(
    outlets: &HashMap<String, Arc<dyn Outlet>>,
    watched: &Watched,
    sent: &super::sent::SentLately,
    policy: Option<&Handle<NudgePolicyService>>,
    e: &OutboxEntry,
) -> (OutboundText, Result<Delivered, OutletError>) {
    let (text, routed) = watched.route(e.text.clone(), outlets);
    let r = match routed {
        // Another copy of this nudge (for another target) already went here.
        Ok(Some(_)) if sent.reached(&text) => Ok(Delivered::Before),
        Ok(Some(outlet)) => deliver_through(&outlet, policy, e, &text).await.map(|()| {
            sent.note(&text);
            Delivered::Now
        }),
        Ok(None) => Err(OutletError::Transient(format!("no outlet for channel `{}`", text.channel))),
        Err(waits) => Err(waits),
    };
    (text, r)
}

/// How a waiting message was delivered.
enum Delivered {
    /// Sent now.
    Now,
    /// Another copy of its nudge had reached the same target.
    Before,
}

/// One try of `text` (the entry `e` as routed) through `outlet`, reserved at the gate.
async fn deliver_through(
    outlet: &Arc<dyn Outlet>,
    policy: Option<&Handle<NudgePolicyService>>,
    e: &OutboxEntry,
    text: &OutboundText,
) -> Result<(), OutletError> {
    let reservation = match (&e.fire, policy) {
        (Some(nudge), Some(policy)) => match policy.call_async(Reserve(nudge.clone())).await {
            Ok(Ok(Reservation::Held(_, fire))) => Some((policy, fire)),
            Ok(Ok(Reservation::Denied(v))) => {
                return Err(OutletError::Transient(format!("held back by the gate: {}", v.reason)))
            }
            Ok(Err(why)) => return Err(OutletError::Transient(format!("the ledger could not be written: {why}"))),
            Err(why) => return Err(OutletError::Transient(format!("the policy is unavailable: {why}"))),
        },
        _ => None,
    };
    let delivered = outlet.deliver(text).await;
    if let (Err(_), Some((policy, fire))) = (&delivered, reservation) {
        release(policy, fire).await;
    }
    delivered
}

/// These channels can take messages again (a REPL attached to the terminal, a gateway
/// connected for its channels): what waits for them is due at once, and retried now.
pub struct Watching(pub Vec<String>);

impl Request for Watching {
    type Reply = Result<RetryReport, StoreError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<Watching> for DeliveryHubService {
    fn serve_async(
        &mut self,
        Watching(mut channels): Watching,
    ) -> LocalBoxFuture<'static, Result<RetryReport, StoreError>> {
        let now = self.clock.now();
        // What waits for an unwatched terminal can go to the fallback channel that came.
        if self.watched.falls_back_to_one_of(&channels) {
            channels.push("cli".to_owned());
        }
        let store = self.store.clone();
        let due = off_thread(move || store.make_due(&channels, now));
        let retry = self.serve_async(RetryOutbox);
        Box::pin(async move {
            due.await?;
            retry.await
        })
    }
}

/// `after 1 attempt`, `after 3 attempts`.
fn attempts_said(n: u32) -> String {
    format!("after {n} attempt{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_attempt_is_said_in_the_singular() {
        assert_eq!(super::attempts_said(1), "after 1 attempt");
        assert_eq!(super::attempts_said(3), "after 3 attempts");
    }
}
