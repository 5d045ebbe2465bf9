//! 1,000 conversations × 10 turns through the Scheduler and the agent loop with an instant
//! provider: turns per second and the p99 submit-to-start latency, next to the in-run
//! baseline of the same turns run one after another without the scheduler.

use chrono::Utc;
use raven_actors::agent::{Agent, AgentLoop};
use raven_actors::clock::SystemClock;
use raven_actors::llm::provider::{CompletionRequest, Provider, ProviderError, ProviderReply};
use raven_actors::sessions::SessionStore;
use raven_actors::spine::{Inbox, OriginPools, Scheduler, TurnHandler, TurnOutcome};
use raven_actors::supervise::LocalBoxFuture;
use raven_proto::{BusyPolicy, Origin, TurnRequest};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

const CONVERSATIONS: usize = 1_000;
const TURNS: usize = 10;

struct Instant0;

impl Provider for Instant0 {
    fn name(&self) -> &str {
        "instant"
    }
    fn complete<'a>(&'a self, _: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async { Ok(ProviderReply::Text("ok".into())) })
    }
}

/// Notes when each turn starts.
struct Timed {
    inner: Agent,
    started: Rc<RefCell<HashMap<String, Instant>>>,
}

impl TurnHandler for Timed {
    fn run(&self, req: TurnRequest, inbox: Inbox) -> LocalBoxFuture<'static, TurnOutcome> {
        self.started.borrow_mut().insert(req.request_id.clone(), Instant::now());
        self.inner.run(req, inbox)
    }
}

fn agent(dir: &std::path::Path) -> Agent {
    Agent(Rc::new(AgentLoop {
        provider: Rc::new(Instant0),
        embedded: None,
        tools: Vec::new(),
        sessions: SessionStore::new(dir.join("sessions")),
        injector: None,
        inbound_hooks: Vec::new(),
        clock: Arc::new(SystemClock),
        max_iterations: 4,
        conversations: None,
        feedback: None,
        history: None,
        knowledge: None,
        micro: raven_actors::agent::MicroLimits::default(),
    }))
}

fn request(c: usize, t: usize) -> TurnRequest {
    let conv = format!("bench:{c}");
    TurnRequest::new(
        format!("{c}-{t}"),
        Origin::User,
        conv,
        "bench",
        c.to_string(),
        "hi",
        BusyPolicy::Append,
        Utc::now(),
    )
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("raven-bench-spine-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let (sched_s, p99_us, base_s) = actix_rt::System::new().block_on(async {
        // Baseline: the same turns, one after another, no scheduler.
        let a = agent(&tmp.join("base"));
        let t = Instant::now();
        for c in 0..CONVERSATIONS {
            for i in 0..TURNS {
                a.run(request(c, i), Inbox::default()).await;
            }
        }
        let base = t.elapsed().as_secs_f64();

        let started = Rc::new(RefCell::new(HashMap::new()));
        let handler = Timed { inner: agent(&tmp.join("sched")), started: started.clone() };
        let s = Scheduler::new(Rc::new(handler), OriginPools::new(4, 2));
        let t = Instant::now();
        let mut submitted = HashMap::new();
        let mut waits = Vec::new();
        for i in 0..TURNS {
            for c in 0..CONVERSATIONS {
                let req = request(c, i);
                submitted.insert(req.request_id.clone(), Instant::now());
                waits.push(s.submit_wait(req).1);
            }
        }
        for w in waits {
            w.await.expect("turn ran");
        }
        let elapsed = t.elapsed().as_secs_f64();
        let started = started.borrow();
        let mut lat: Vec<f64> =
            submitted.iter().map(|(id, at)| started[id].duration_since(*at).as_secs_f64() * 1e6).collect();
        lat.sort_by(f64::total_cmp);
        (elapsed, lat[lat.len() * 99 / 100], base)
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let n = (CONVERSATIONS * TURNS) as f64;
    println!("{:<58} {:>12}", "benchmark", "figure");
    println!("{:<58} {:>8.0} /s", "turns through the scheduler (1000 conv x 10, pool 4)", n / sched_s);
    println!("{:<58} {:>8.0} /s", "baseline: the same turns run directly, one at a time", n / base_s);
    println!("{:<58} {:>12.2}", "ratio scheduler / direct", (n / sched_s) / (n / base_s));
    println!("{:<58} {:>8.1} ms", "p99 submit-to-start latency (all 10,000 queued at once)", p99_us / 1e3);
}
