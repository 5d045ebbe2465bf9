//! The long-running loops (the Sentinel tick, the cron timer, the heartbeat, the defer poll,
//! the trigger drain, the outbox retry) supervised like the actors: a loop that ends or
//! panics is started again, after 10 ms doubling to 5 s, and each restart is counted on its
//! own meter (`loop:<name>` in `raven status`). Stopping the supervisor's task stops the loop.
//! `RAVEN_FAULT=loop:<name>:<n>` makes the loop's n-th run panic as it starts (the fault
//! suite's switch, as for the actors).

use super::Metrics;
use actix_rt::task::JoinHandle;
use std::time::Duration;

const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// The running loop, aborted when its supervisor is.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs the loop `start` spawns, for as long as the returned task is not aborted.
pub fn supervised_loop(
    name: &'static str,
    metrics: &Metrics,
    start: impl Fn() -> JoinHandle<()> + 'static,
) -> JoinHandle<()> {
    let meter = metrics.register(&format!("loop:{name}"));
    let fault = std::env::var("RAVEN_FAULT").ok().and_then(|spec| super::parse_fault(&spec, &format!("loop:{name}")));
    actix_rt::spawn(async move {
        let mut backoff = super::backoff::Backoff::new(FIRST_PAUSE, MAX_PAUSE);
        let mut runs = 0u64;
        loop {
            runs += 1;
            let faulty = fault.is_some_and(|(at, onwards)| runs == at || (onwards && runs >= at));
            let mut run = AbortOnDrop(if faulty { actix_rt::spawn(injected(name, runs)) } else { start() });
            match (&mut run.0).await {
                Err(e) if e.is_cancelled() => return,
                Err(e) => tracing::error!(loop = name, "the loop panicked ({e}); starting it again"),
                Ok(()) => tracing::error!(loop = name, "the loop ended; starting it again"),
            }
            meter.on_restart();
            actix_rt::time::sleep(backoff.next_wait()).await;
        }
    })
}

/// The run of a loop the fault switch names: it panics at once.
async fn injected(name: &'static str, run: u64) {
    panic!("fault injected in loop {name} at run {run}");
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
