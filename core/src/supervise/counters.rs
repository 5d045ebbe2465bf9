//! The engine's event counters: nudges, gate denials, deliveries, cron fires, outbox moves,
//! feedback verdicts and LLM calls. The decision journal feeds them on every event it
//! records (written to its file or not), the provider wrapper on every LLM call. They live
//! in the process: a restart starts them from zero.

use crate::journal::Event;
use crate::llm::decorator::Decorator;
use crate::llm::provider::{CompletionRequest, ProviderError, SharedProvider};
use crate::llm::usage::Answer;
use futures_util::future::LocalBoxFuture;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// A metric's labels, in order.
type Labels = Vec<(String, String)>;

fn labels<const N: usize>(pairs: [(&str, &str); N]) -> Labels {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// The label values known ahead, shown at zero before their first event (a family with
/// no series at all is left out of the output).
const TICK_OUTCOMES: [&str; 4] = ["skipped", "delivered", "denied", "failed"];
const OUTBOX_MOVES: [&str; 4] = ["queued", "delivered", "dropped", "dead_letter"];
const VERDICTS: [&str; 6] = ["accepted", "dismissed", "neutral", "later", "engaged", "ignored"];

/// Cheap to clone: every clone counts into the same families.
#[derive(Debug, Clone)]
pub struct Counters {
    ticks: Family<Labels, Counter>,
    nudges: Family<Labels, Counter>,
    denials: Family<Labels, Counter>,
    deliveries: Family<Labels, Counter>,
    cron_fires: Counter,
    outbox_moves: Family<Labels, Counter>,
    verdicts: Family<Labels, Counter>,
    llm_calls: Family<Labels, Counter>,
    llm_tokens: Family<Labels, Counter>,
}

impl Default for Counters {
    fn default() -> Self {
        let c = Counters {
            ticks: Family::default(),
            nudges: Family::default(),
            denials: Family::default(),
            deliveries: Family::default(),
            cron_fires: Counter::default(),
            outbox_moves: Family::default(),
            verdicts: Family::default(),
            llm_calls: Family::default(),
            llm_tokens: Family::default(),
        };
        for role in ["planner", "agent", "heartbeat", "other"] {
            for kind in ["prompt", "completion"] {
                let _ = c.llm_tokens.get_or_create(&labels([("role", role), ("kind", kind)]));
            }
        }
        c.at_zero(&c.ticks, "outcome", &TICK_OUTCOMES);
        c.at_zero(&c.outbox_moves, "move", &OUTBOX_MOVES);
        c.at_zero(&c.verdicts, "verdict", &VERDICTS);
        c.at_zero(&c.llm_calls, "result", &["ok"]);
        for action in ["nudge", "nudge_inject", "nudge_defer", "spawn_agent"] {
            let _ = c.nudges.get_or_create(&labels([("action", action), ("source", "sentinel")]));
        }
        let _ = c.deliveries.get_or_create(&labels([("channel", "cli"), ("result", "delivered")]));
        for layer in raven_proto::PolicyLayer::ALL {
            let _ = c.denials.get_or_create(&labels([("layer", layer.number()), ("name", layer.name())]));
        }
        c
    }
}

impl Counters {
    fn at_zero(&self, family: &Family<Labels, Counter>, key: &str, values: &[&str]) {
        for v in values {
            let _ = family.get_or_create(&labels([(key, v)]));
        }
    }

    /// Counts one journal event under the families it belongs to.
    pub fn observe(&self, source: Option<&str>, event: &Event) {
        match event {
            Event::Tick(t) => {
                self.ticks.get_or_create(&labels([("outcome", &t.outcome)])).inc();
                if t.outcome == "delivered" {
                    let source = source.unwrap_or("sentinel");
                    self.nudges.get_or_create(&labels([("action", &t.action), ("source", source)])).inc();
                }
            }
            Event::Gate(g) if !g.allow => {
                let layer = g.layer.as_deref().unwrap_or("none");
                let name = g.layer_name.as_deref().unwrap_or("none");
                self.denials.get_or_create(&labels([("layer", layer), ("name", name)])).inc();
            }
            Event::Gate(_) => {}
            Event::Delivery(d) => self.delivery(&d.target, &d.status),
            Event::Outbox(o) => {
                self.outbox_moves.get_or_create(&labels([("move", &o.step)])).inc();
                self.delivery(&o.target, &o.step);
            }
            Event::Cron(_) => {
                self.cron_fires.inc();
            }
            Event::Verdict(v) => {
                self.verdicts.get_or_create(&labels([("verdict", &v.verdict)])).inc();
            }
            Event::LlmUsage(u) => {
                let count = |kind: &str, n: u64| {
                    self.llm_tokens.get_or_create(&labels([("role", u.role.as_str()), ("kind", kind)])).inc_by(n);
                };
                count("prompt", u.prompt_tokens);
                count("completion", u.completion_tokens);
            }
            Event::Config(_) | Event::Heartbeat(_) | Event::Discovery(_) => {}
        }
    }

    fn delivery(&self, target: &str, result: &str) {
        let channel = target.split_once(':').map_or(target, |(c, _)| c);
        self.deliveries.get_or_create(&labels([("channel", channel), ("result", result)])).inc();
    }

    /// Counts one LLM call by how it ended.
    pub fn llm_call(&self, result: Result<(), &ProviderError>) {
        let result = match result {
            Ok(()) => "ok",
            Err(ProviderError::Http { .. }) => "http_error",
            Err(ProviderError::Timeout(_)) => "timeout",
            Err(ProviderError::Transport(_)) => "transport_error",
            Err(ProviderError::Decode(_)) => "decode_error",
            Err(ProviderError::TooLarge { .. }) => "too_large",
            Err(ProviderError::CutOff { .. }) => "cut_off",
            Err(ProviderError::Down { .. }) => "provider_down",
            Err(ProviderError::BudgetSpent { .. }) => "budget_spent",
        };
        self.llm_calls.get_or_create(&labels([("result", result)])).inc();
    }

    /// Registers every family (the counters' names get their `_total`).
    pub fn register(&self, r: &mut Registry) {
        r.register("raven_ticks", "Sentinel ticks by how they ended", self.ticks.clone());
        r.register("raven_nudges", "Nudges delivered by a tick, by action and source", self.nudges.clone());
        r.register("raven_gate_denials", "Gate denials by layer", self.denials.clone());
        r.register("raven_deliveries", "Deliveries and outbox moves by channel and result", self.deliveries.clone());
        r.register("raven_cron_fires", "Cron jobs fired", self.cron_fires.clone());
        r.register(
            "raven_outbox_moves",
            "Outbox moves: queued, delivered, dropped, dead_letter",
            self.outbox_moves.clone(),
        );
        r.register("raven_feedback_verdicts", "Feedback verdicts on messages", self.verdicts.clone());
        r.register("raven_llm_calls", "LLM provider calls by result", self.llm_calls.clone());
        r.register(
            "raven_llm_tokens",
            "LLM tokens used, by role and kind (prompt, completion)",
            self.llm_tokens.clone(),
        );
    }

    /// The provider, its calls counted here.
    pub fn metered(&self, inner: SharedProvider) -> SharedProvider {
        std::rc::Rc::new(Metered { inner, counters: self.clone() })
    }
}

/// A provider whose calls are counted in [`Counters`].
struct Metered {
    inner: SharedProvider,
    counters: Counters,
}

impl Decorator for Metered {
    fn inner(&self) -> &SharedProvider {
        &self.inner
    }

    fn around<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        Box::pin(async move {
            let answer = self.inner.answer(req).await;
            self.counters.llm_call(answer.reply.as_ref().map(|_| ()));
            answer
        })
    }
}
