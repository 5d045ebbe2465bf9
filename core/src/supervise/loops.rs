//! The long-running loops (the Sentinel tick, the cron timer, the heartbeat, the defer poll,
//! the trigger drain, the outbox retry) supervised like the actors: a loop that ends or
//! panics is started again, after 10 ms doubling to 5 s, and each restart is counted on its
//! own meter (`loop:<name>` in `raven status`). Stopping the supervisor's task stops the loop.
//! `RAVEN_FAULT=loop:<name>:<n>` makes the loop's n-th run panic as it starts (the fault
//! suite's switch, as for the actors).

use super::restart::{keep_running, Ended};
use super::{Metrics, RestartPolicy};
use actix_rt::task::{JoinError, JoinHandle};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The running loop, awaited to its end and aborted when its supervisor is.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Future for AbortOnDrop {
    type Output = Result<(), JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// How a loop is started again: after 10 ms, doubling to 5 s.
fn policy(name: &str) -> RestartPolicy {
    RestartPolicy {
        backoff_initial: Duration::from_millis(10),
        backoff_max: Duration::from_secs(5),
        healthy_run: None,
        ..RestartPolicy::default()
    }
    .with_fault_from_env(&format!("loop:{name}"))
}

/// Runs the loop `start` spawns, for as long as the returned task is not aborted.
pub fn supervised_loop(
    name: &'static str,
    metrics: &Metrics,
    start: impl Fn() -> JoinHandle<()> + 'static,
) -> JoinHandle<()> {
    let meter = metrics.register(&format!("loop:{name}"));
    actix_rt::spawn(async move {
        let run = || AbortOnDrop(start());
        let after = |ended: Ended<Result<(), JoinError>>, wait| {
            match ended {
                Ended::Returned(Err(e)) if e.is_cancelled() => return None,
                Ended::Returned(Err(e)) => tracing::error!(loop = name, "the loop panicked ({e}); starting it again"),
                Ended::Panicked => tracing::error!(loop = name, "the loop panicked; starting it again"),
                Ended::Returned(Ok(())) => tracing::error!(loop = name, "the loop ended; starting it again"),
            }
            meter.on_restart();
            Some(wait)
        };
        keep_running(&format!("loop {name}"), &policy(name), run, after).await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[actix_rt::test]
    async fn a_loop_that_panics_is_started_again_and_counted_and_stops_with_its_supervisor() {
        let metrics = Metrics::default();
        let (runs, ticks) = (Rc::new(Cell::new(0u32)), Rc::new(Cell::new(0u32)));
        let (r, t) = (runs.clone(), ticks.clone());
        let sup = supervised_loop("test", &metrics, move || {
            r.set(r.get() + 1);
            let (first, t) = (r.get() == 1, t.clone());
            actix_rt::spawn(async move {
                assert!(!first, "an injected fault in the loop's first run");
                loop {
                    t.set(t.get() + 1);
                    actix_rt::time::sleep(Duration::from_millis(1)).await;
                }
            })
        });
        for _ in 0..200 {
            if ticks.get() >= 3 {
                break;
            }
            actix_rt::time::sleep(Duration::from_millis(1)).await;
        }
        assert!(ticks.get() >= 3, "the loop runs again after its panic");
        let restarts = metrics.snapshot().into_iter().find(|m| m.name == "loop:test").unwrap().restarts;
        assert_eq!((runs.get(), restarts), (2, 1));
        sup.abort();
        actix_rt::time::sleep(Duration::from_millis(5)).await;
        let stopped = ticks.get();
        actix_rt::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(ticks.get(), stopped, "aborting the supervisor stops the loop");
    }
}
