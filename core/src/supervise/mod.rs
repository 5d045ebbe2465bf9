//! One generic way for every actor to be supervised and metered.
//!
//! A subsystem writes a plain [`Service`] (its state and logic) and one [`Serve`] impl per
//! [`Request`]. [`start`] wraps it in a [`ServiceActor`] under an `actix::Supervisor`.
//! actix does not supervise a *panic* (the mailbox would just close), so the wrapper
//! catches it, counts it as a failure, answers the caller with an error value and stops the
//! actor; the Supervisor then restarts it on the same `Addr`, after a backoff, and
//! [`Service::restarting`] reloads its state from the store. More restarts than the limit
//! inside the window is a crash loop: reported in the metrics and logs, and the actor then
//! answers every message with [`ActorError::CrashLoop`] instead of spinning.

pub mod backoff;
mod counters;
mod exposition;
pub mod loops;
mod meter;
mod policy;
pub mod restart;

pub use counters::Counters;
pub use exposition::{render_prometheus, OutboxLevels};
pub use meter::{render_table, Meter, MeterSnapshot, Metrics};
pub use policy::{parse_fault, RestartPolicy};

use actix::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// A message to a service, with the type of its reply.
pub trait Request: Send + 'static {
    type Reply: Send + 'static;

    /// Whether a reply counts as a failed handling in the metrics.
    fn failed(_reply: &Self::Reply) -> bool {
        false
    }
}

/// The state and logic of one actor.
pub trait Service: Unpin + 'static {
    /// Name in `raven status`.
    fn name(&self) -> &'static str;

    /// After a failure, before the next message: reload state from the store (the
    /// in-memory state may be half-updated by the handler that panicked).
    fn restarting(&mut self) {}
}

pub trait Serve<M: Request>: Service {
    fn serve(&mut self, msg: M) -> M::Reply;
}

/// A handler that awaits (a provider call, a peer actor). It returns a `'static` future:
/// state it needs across awaits lives behind an `Rc` in the service, typically with a
/// `tokio::sync::Mutex` that keeps such calls one at a time. A panic while the future runs
/// is caught and handled like a panic in [`Serve::serve`].
pub trait ServeAsync<M: Request>: Service {
    fn serve_async(&mut self, msg: M) -> LocalBoxFuture<'static, M::Reply>;
}

pub use futures_util::future::LocalBoxFuture;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActorError {
    #[error("actor {actor} panicked while handling a message: {message}")]
    Panicked { actor: &'static str, message: String },
    #[error("actor {actor} is crash-looping and no longer serves")]
    CrashLoop { actor: &'static str },
    #[error("actor {actor} is unreachable: {message}")]
    Mailbox { actor: &'static str, message: String },
}

pub struct ServiceActor<S: Service> {
    inner: S,
    meter: Arc<Meter>,
    policy: RestartPolicy,
    /// Restarts inside the current window (monotonic time; backoff is real time even
    /// under a manual engine clock).
    recent_restarts: Vec<Instant>,
    /// When the current crash loop began.
    crash_loop_since: Option<Instant>,
}

impl<S: Service> Actor for ServiceActor<S> {
    type Context = Context<Self>;
}

impl<S: Service> Supervised for ServiceActor<S> {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.recover(ctx);
    }
}

impl<S: Service> ServiceActor<S> {
    /// After a panic: the service reloads its state in place (the actor is not stopped, so
    /// the other calls in flight complete), after a backoff that holds the mailbox; too many
    /// in the window is a crash loop.
    fn recover(&mut self, ctx: &mut Context<Self>) {
        self.meter.on_restart();
        let now = Instant::now();
        let window = self.policy.window;
        self.recent_restarts.retain(|t| now.duration_since(*t) < window);
        self.recent_restarts.push(now);
        let n = self.recent_restarts.len() as u32;
        if n > self.policy.max_restarts {
            self.meter.set_crash_loop(true);
            self.crash_loop_since = Some(now);
            tracing::error!(
                actor = self.inner.name(),
                restarts = n,
                "actor is crash-looping ({n} restarts within {window:?}); it stops serving for {:?}",
                self.policy.cooldown
            );
            return;
        }
        let backoff = backoff::Backoff::new(self.policy.backoff_initial, self.policy.backoff_max).wait_before(n);
        tracing::warn!(actor = self.inner.name(), restart = n, ?backoff, "restarting actor");
        self.inner.restarting();
        // Hold the mailbox for the backoff: queued messages wait, nothing is dropped.
        ctx.wait(actix::clock::sleep(backoff).into_actor(self));
    }

    /// Whether a crash loop keeps this call out; one past its cool-down is re-opened (the
    /// service reloads its state first).
    fn shut(&mut self) -> bool {
        let Some(since) = self.crash_loop_since else { return false };
        if since.elapsed() < self.policy.cooldown {
            return true;
        }
        tracing::warn!(actor = self.inner.name(), "crash loop cooled down; the actor serves again");
        self.crash_loop_since = None;
        self.recent_restarts.clear();
        self.meter.set_crash_loop(false);
        self.inner.restarting();
        false
    }
}

/// The envelope every call travels in.
pub struct Call<M: Request>(M);

impl<M: Request> Message for Call<M> {
    type Result = Result<M::Reply, ActorError>;
}

impl<S, M> Handler<Call<M>> for ServiceActor<S>
where
    S: Serve<M>,
    M: Request,
{
    type Result = Result<M::Reply, ActorError>;

    fn handle(&mut self, Call(msg): Call<M>, ctx: &mut Context<Self>) -> Self::Result {
        self.meter.on_start();
        let actor = self.inner.name();
        if self.shut() {
            self.meter.on_done(false, 0);
            return Err(ActorError::CrashLoop { actor });
        }
        let started = Instant::now();
        let fault = self.policy.faults_at(self.meter.started_count());
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if fault {
                panic!("fault injected at message {}", self.meter.started_count());
            }
            self.inner.serve(msg)
        }));
        let ns = started.elapsed().as_nanos() as u64;
        match outcome {
            Ok(reply) => {
                self.meter.on_done(!M::failed(&reply), ns);
                Ok(reply)
            }
            Err(panic) => {
                self.meter.on_done(false, ns);
                let message = panic_text(&panic);
                tracing::error!(actor, %message, "handler panicked; restarting the actor");
                self.recover(ctx);
                Err(ActorError::Panicked { actor, message })
            }
        }
    }
}

/// The envelope of an awaiting call.
pub struct CallAsync<M: Request>(M);

impl<M: Request> Message for CallAsync<M> {
    type Result = Result<M::Reply, ActorError>;
}

impl<S, M> Handler<CallAsync<M>> for ServiceActor<S>
where
    S: ServeAsync<M>,
    M: Request,
{
    type Result = ResponseActFuture<Self, Result<M::Reply, ActorError>>;

    fn handle(&mut self, CallAsync(msg): CallAsync<M>, _ctx: &mut Context<Self>) -> Self::Result {
        use futures_util::FutureExt;
        self.meter.on_start();
        let actor = self.inner.name();
        if self.shut() {
            self.meter.on_done(false, 0);
            return Box::pin(actix::fut::ready(Err(ActorError::CrashLoop { actor })));
        }
        let started = Instant::now();
        let fault = self.policy.faults_at(self.meter.started_count());
        let fut = match catch_unwind(AssertUnwindSafe(|| {
            if fault {
                panic!("fault injected at message {}", self.meter.started_count());
            }
            self.inner.serve_async(msg)
        })) {
            Ok(fut) => FutureExt::boxed_local(AssertUnwindSafe(fut).catch_unwind()),
            Err(panic) => FutureExt::boxed_local(futures_util::future::ready(Err(panic))),
        };
        Box::pin(fut.into_actor(self).map(move |outcome, act, ctx| {
            let ns = started.elapsed().as_nanos() as u64;
            match outcome {
                Ok(reply) => {
                    act.meter.on_done(!M::failed(&reply), ns);
                    Ok(reply)
                }
                Err(panic) => {
                    act.meter.on_done(false, ns);
                    let message = panic_text(&panic);
                    tracing::error!(actor, %message, "handler panicked; restarting the actor");
                    act.recover(ctx);
                    Err(ActorError::Panicked { actor, message })
                }
            }
        }))
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic".into())
}

/// The way to talk to a supervised service. Cloning is cheap; it stays valid across
/// restarts.
pub struct Handle<S: Service> {
    addr: Addr<ServiceActor<S>>,
    meter: Arc<Meter>,
    name: &'static str,
}

impl<S: Service> Clone for Handle<S> {
    fn clone(&self) -> Self {
        Handle { addr: self.addr.clone(), meter: self.meter.clone(), name: self.name }
    }
}

impl<S: Service> Handle<S> {
    pub async fn call<M>(&self, msg: M) -> Result<M::Reply, ActorError>
    where
        S: Serve<M>,
        M: Request,
    {
        self.meter.on_send();
        self.addr.send(Call(msg)).await.unwrap_or_else(|e| Err(self.undelivered(e)))
    }

    /// Calls an awaiting handler.
    pub async fn call_async<M>(&self, msg: M) -> Result<M::Reply, ActorError>
    where
        S: ServeAsync<M>,
        M: Request,
    {
        self.meter.on_send();
        self.addr.send(CallAsync(msg)).await.unwrap_or_else(|e| Err(self.undelivered(e)))
    }

    /// A message that never reached (or never left) the mailbox.
    fn undelivered(&self, e: MailboxError) -> ActorError {
        self.meter.on_send_failed();
        ActorError::Mailbox { actor: self.name, message: e.to_string() }
    }

    /// Fire and forget, from any thread (a file watcher's, say).
    pub fn do_send<M>(&self, msg: M)
    where
        S: Serve<M>,
        M: Request,
    {
        self.meter.on_send();
        if self.addr.try_send(Call(msg)).is_err() {
            self.meter.on_send_failed();
        }
    }
}

/// Starts `service` supervised on the current arbiter, registered in `metrics`.
pub fn start<S: Service>(service: S, metrics: &Metrics, policy: RestartPolicy) -> Handle<S> {
    let name = service.name();
    let meter = metrics.register(name);
    let m = meter.clone();
    let addr = Supervisor::start(move |_| ServiceActor {
        inner: service,
        meter: m,
        policy,
        recent_restarts: Vec::new(),
        crash_loop_since: None,
    });
    Handle { addr, meter, name }
}

#[cfg(test)]
mod tests;
