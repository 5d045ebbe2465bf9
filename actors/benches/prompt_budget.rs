//! The prompt budget over the shipped month scenario with a 1 MB MEMORY.md: every Planner call
//! of `raven simulate scenarios/month.toml` (run with the embedded rules, which record each
//! call's context) is rendered as the body the openai provider would send for the default
//! model (never sent), bounded and unbounded, and reported per day in bytes and tokens
//! (`o200k_base`; in the unbounded body MEMORY.md is counted once per version and added).

use futures_util::future::LocalBoxFuture;
use raven_actors::data_dir::DataDir;
use raven_actors::llm::budget::TokenCounter;
use raven_actors::llm::openai::OpenAiProvider;
use raven_actors::llm::provider::{
    ChatMessage, CompletionRequest, Provider, ProviderError, ProviderReply, SharedProvider,
};
use raven_actors::planner::{prompts, rules::RulesProvider, ProactivePlanner};
use raven_proto::PlannerContext;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

/// The rules, recording the context of each Planner call.
struct Recording {
    rules: RulesProvider,
    seen: Rc<RefCell<Vec<Arc<PlannerContext>>>>,
}

impl Provider for Recording {
    fn name(&self) -> &str {
        "rules"
    }

    fn reads_prompt(&self) -> bool {
        false
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        if let (Some(ctx), Some(prompts::TOOL_NAME)) = (&req.context, req.tool_choice.as_deref()) {
            self.seen.borrow_mut().push(ctx.clone());
        }
        self.rules.complete(req)
    }
}

fn one_megabyte(head: &str) -> String {
    let mut s = head.to_owned();
    let mut i = 0;
    while s.len() < 1 << 20 {
        s.push_str(&format!("- note {i}: the user mentioned a film, a shop, a friend's birthday idea\n"));
        i += 1;
    }
    s
}

#[derive(Default)]
struct Day {
    calls: usize,
    bytes: usize,
    tokens: usize,
    whole_bytes: usize,
    whole_tokens: usize,
}

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/month.toml");
    let mut plan = raven_actors::simulate::load(&path, Default::default()).unwrap();
    plan.memory = one_megabyte(&plan.memory);
    let tmp = tempfile::tempdir().unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let tz: chrono_tz::Tz = "Europe/Berlin".parse().unwrap();
    let recording: SharedProvider = Rc::new(Recording { rules: RulesProvider::new(tz), seen: seen.clone() });
    let sys = actix_rt::System::new();
    sys.block_on(raven_actors::simulate::drive::run(&plan, &DataDir::new(tmp.path()), Some(recording))).unwrap();

    let openai =
        Rc::new(OpenAiProvider::new("http://127.0.0.1:9/v1", "gpt-4o-mini", None, Default::default()).unwrap());
    let planner = ProactivePlanner::new(openai.clone());
    let counter = TokenCounter::for_model("gpt-4o-mini");
    let mut memory_tokens: HashMap<usize, usize> = HashMap::new();
    let mut days: BTreeMap<chrono::NaiveDate, Day> = BTreeMap::new();
    for ctx in seen.borrow().iter() {
        let bounded = openai.body(&planner.request(ctx.clone()));
        let mut whole_req = planner.request(ctx.clone());
        whole_req.messages =
            vec![ChatMessage::system(prompts::SYSTEM_PROMPT), ChatMessage::user(prompts::render_context(ctx))];
        let whole = openai.body(&whole_req);
        let mut without_memory = (**ctx).clone();
        without_memory.memory_md = Arc::from("");
        whole_req.messages[1] = ChatMessage::user(prompts::render_context(&without_memory));
        let memory = *memory_tokens
            .entry(Arc::as_ptr(&ctx.memory_md) as *const u8 as usize)
            .or_insert_with(|| counter.count(&ctx.memory_md));
        let day = days.entry(ctx.now.with_timezone(&tz).date_naive()).or_default();
        day.calls += 1;
        day.bytes += bounded.to_string().len();
        day.tokens += counter.count(&bounded.to_string());
        day.whole_bytes += whole.to_string().len();
        day.whole_tokens += counter.count(&openai.body(&whole_req).to_string()) + memory;
    }
    println!(
        "{:<12} {:>5} {:>12} {:>10} {:>14} {:>12} {:>8}",
        "day", "calls", "bytes", "tokens", "unbounded B", "unbounded t", "ratio"
    );
    let mut total = Day::default();
    for (date, d) in &days {
        println!(
            "{:<12} {:>5} {:>12} {:>10} {:>14} {:>12} {:>8.4}",
            date,
            d.calls,
            d.bytes,
            d.tokens,
            d.whole_bytes,
            d.whole_tokens,
            d.tokens as f64 / d.whole_tokens.max(1) as f64
        );
        total.calls += d.calls;
        total.bytes += d.bytes;
        total.tokens += d.tokens;
        total.whole_bytes += d.whole_bytes;
        total.whole_tokens += d.whole_tokens;
    }
    let max = seen
        .borrow()
        .iter()
        .map(|c| counter.count(&openai.body(&planner.request(c.clone())).to_string()))
        .max()
        .unwrap_or(0);
    println!(
        "{:<12} {:>5} {:>12} {:>10} {:>14} {:>12} {:>8.4}   (largest bounded body: {max} tokens; budget 4,000)",
        "month",
        total.calls,
        total.bytes,
        total.tokens,
        total.whole_bytes,
        total.whole_tokens,
        total.tokens as f64 / total.whole_tokens.max(1) as f64
    );
}
