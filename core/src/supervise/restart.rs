//! The one restart loop of what must keep running: the engine's loops, the chat channels'
//! listeners and the gateway child. A run that ends or panics is started again after the
//! [`RestartPolicy`]'s doubling wait (the doubling starts over after a healthy run); the
//! caller's `after` sees how each run ended, tells it (logs, meters, health) and may choose
//! another wait, or stop. The fault switch (`RAVEN_FAULT`, read into the policy) makes a
//! chosen run panic as it starts.

use super::backoff::Backoff;
use super::RestartPolicy;
use futures_util::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;
use tokio::time::Instant;

/// How one run ended.
#[derive(Debug)]
pub enum Ended<O> {
    /// It returned `O`.
    Returned(O),
    /// It panicked (the fault switch's panics included).
    Panicked,
}

/// Runs `run` again and again. After each run, `after` gets how it ended and the wait the
/// doubling gives (which advances with every run, whichever wait is taken) and answers the
/// wait before the next run, or `None` to stop.
pub async fn keep_running<O, F>(
    what: &str,
    policy: &RestartPolicy,
    mut run: impl FnMut() -> F,
    mut after: impl FnMut(Ended<O>, Duration) -> Option<Duration>,
) where
    F: Future<Output = O>,
{
    let mut backoff = Backoff::new(policy.backoff_initial, policy.backoff_max);
    let mut runs = 0u64;
    loop {
        runs += 1;
        let started = Instant::now();
        let faulty = policy.faults_at(runs);
        let one = async {
            if faulty {
                panic!("fault injected in {what} at run {runs}");
            }
            run().await
        };
        let ended = match AssertUnwindSafe(one).catch_unwind().await {
            Ok(out) => Ended::Returned(out),
            Err(_) => Ended::Panicked,
        };
        if policy.healthy_run.is_some_and(|healthy| started.elapsed() >= healthy) {
            backoff.reset();
        }
        let Some(wait) = after(ended, backoff.next_wait()) else { return };
        actix_rt::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    fn policy() -> RestartPolicy {
        RestartPolicy {
            backoff_initial: Duration::from_millis(1),
            backoff_max: Duration::from_millis(4),
            healthy_run: Some(Duration::from_secs(60)),
            ..RestartPolicy::default()
        }
    }

    #[actix_rt::test]
    async fn each_run_is_started_again_after_the_doubling_wait_until_after_says_stop() {
        let runs = Cell::new(0u32);
        let seen = RefCell::new(Vec::new());
        let faulty = RestartPolicy { panic_at: Some(2), healthy_run: None, ..policy() };
        keep_running(
            "test",
            &faulty,
            || {
                runs.set(runs.get() + 1);
                let n = runs.get();
                async move { n }
            },
            |ended, wait| {
                let what = match ended {
                    Ended::Returned(n) => format!("run {n}"),
                    Ended::Panicked => "panicked".to_owned(),
                };
                seen.borrow_mut().push((what, wait));
                (seen.borrow().len() < 5).then_some(wait)
            },
        )
        .await;
        let ms = Duration::from_millis;
        let expected = [("run 1", ms(1)), ("panicked", ms(2)), ("run 2", ms(4)), ("run 3", ms(4)), ("run 4", ms(4))];
        let expected: Vec<_> = expected.iter().map(|(w, d)| (w.to_string(), *d)).collect();
        assert_eq!(*seen.borrow(), expected, "the fault switch panics the 2nd run; the wait doubles to its max");
    }

    #[actix_rt::test]
    async fn a_healthy_run_starts_the_doubling_over() {
        tokio::time::pause();
        let runs = Cell::new(0u32);
        let waits = RefCell::new(Vec::new());
        keep_running(
            "test",
            &policy(),
            || {
                runs.set(runs.get() + 1);
                let long = runs.get() == 3;
                async move {
                    if long {
                        actix_rt::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            },
            |_, wait| {
                waits.borrow_mut().push(wait);
                (waits.borrow().len() < 4).then_some(Duration::ZERO)
            },
        )
        .await;
        let ms = Duration::from_millis;
        assert_eq!(*waits.borrow(), [ms(1), ms(2), ms(1), ms(2)], "the third run lasted past `healthy_run`");
    }
}
