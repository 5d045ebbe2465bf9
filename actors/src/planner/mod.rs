//! ProactivePlanner (spec §4): `(ctx, provider) -> PlannerDecision`, a pure decision that
//! degrades every failure to skip and never fails.

pub(crate) mod brief;
pub(crate) mod budget;
pub mod heartbeat;
pub mod prompts;
pub(crate) mod reminders;
pub mod rules;

use crate::context::daily_analysis::{self, DailyAnalysis};
use crate::llm::provider::{self, Caller, ChatMessage, CompletionRequest, Generation, SharedProvider};
use crate::supervise::{LocalBoxFuture, Request, ServeAsync, Service};
use raven_proto::{PlannerContext, PlannerDecision};
use std::sync::Arc;

/// Pinned so a global provider configuration cannot leak into the decision.
pub const PLANNER_GENERATION: Generation = Generation { max_tokens: 400, temperature: 0.1, caller: Caller::Planner };

#[derive(Clone)]
pub struct ProactivePlanner {
    provider: SharedProvider,
    /// How dates in MEMORY.md are read (which items are due soon, for the bounded prompt).
    order: crate::time::DateOrder,
}

/// A decision, and whether it is the fallback skip of a failure (the runner's deadline
/// fallback needs to know).
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub decision: PlannerDecision,
    pub error: Option<String>,
}

impl ProactivePlanner {
    pub fn new(provider: SharedProvider) -> Self {
        ProactivePlanner { provider, order: crate::time::DateOrder::default() }
    }

    /// How `5/6` in the user's notes reads.
    pub fn with_order(mut self, order: crate::time::DateOrder) -> Self {
        self.order = order;
        self
    }

    /// The context as the provider reads it, within its prompt budget (the system prompt
    /// `system` and the tool schema `tool` paid for first).
    fn bounded_context(&self, ctx: &PlannerContext, system: &str, tool: &provider::ToolSchema) -> String {
        let budget = self.provider.prompt_budget();
        let schema = tool.parameters.to_string();
        let allowance = budget.left_after([system, schema.as_str(), tool.description.as_str()], 2);
        budget::planner::render(ctx, &budget, allowance, self.order)
    }

    /// The request for `ctx`; the context travels along without a copy (it can be megabytes),
    /// and is rendered as text only for a provider that reads it.
    pub fn request(&self, ctx: Arc<PlannerContext>) -> CompletionRequest {
        let mut messages = vec![ChatMessage::system(prompts::SYSTEM_PROMPT)];
        let tool = prompts::tool_schema();
        if self.provider.reads_prompt() {
            messages.push(ChatMessage::user(self.bounded_context(&ctx, prompts::SYSTEM_PROMPT, &tool)));
        }
        CompletionRequest {
            messages,
            tools: vec![tool],
            tool_choice: Some(prompts::TOOL_NAME.into()),
            generation: PLANNER_GENERATION,
            context: Some(ctx),
        }
    }

    /// Spec §4: provider error, no tool call, arguments not an object → skip with the
    /// reason; otherwise the validated decision.
    pub async fn decide(&self, ctx: PlannerContext) -> Planned {
        let failed =
            |why: String| Planned { decision: PlannerDecision::skip(format!("planner_error:{why}")), error: Some(why) };
        let reply = match self.provider.complete(&self.request(Arc::new(ctx))).await {
            Err(e) => return failed(e.to_string()),
            Ok(reply) => reply,
        };
        match reply.first_call() {
            None => failed("no_tool_call".into()),
            Some(call) if call.name != prompts::TOOL_NAME => failed(format!("unexpected_tool:{}", call.name)),
            Some(call) if !call.arguments.is_object() => failed("args_not_object".into()),
            Some(call) => Planned { decision: PlannerDecision::from_tool_args(&call.arguments), error: None },
        }
    }
}

impl ProactivePlanner {
    /// The DailyAnalysisService's one call of the day.
    pub async fn analyze_day(
        &self,
        ctx: &PlannerContext,
        today: chrono::NaiveDate,
    ) -> Result<DailyAnalysis, AnalysisError> {
        let tool = prompts::analysis_schema();
        let req = CompletionRequest {
            messages: vec![
                ChatMessage::system(prompts::ANALYSIS_PROMPT),
                ChatMessage::user(self.bounded_context(ctx, prompts::ANALYSIS_PROMPT, &tool)),
            ],
            tools: vec![tool],
            tool_choice: Some(daily_analysis::TOOL_NAME.into()),
            generation: PLANNER_GENERATION,
            context: Some(Arc::new(ctx.clone())),
        };
        let reply = self.provider.complete(&req).await?;
        match reply.first_call() {
            Some(call) if call.name == daily_analysis::TOOL_NAME => {
                let field = |k: &str| call.arguments.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
                match (field("focus"), field("watch_out")) {
                    (Some(focus), Some(watch_out)) => Ok(DailyAnalysis { date: today, focus, watch_out }),
                    _ => Err(AnalysisError::Incomplete),
                }
            }
            _ => Err(AnalysisError::NoCall(format!("{reply:?}"))),
        }
    }
}

/// Why the day's analysis was not made (the tick goes on without it, and tries again later).
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Model(#[from] provider::ProviderError),
    #[error("daily_analysis without focus or watch_out")]
    Incomplete,
    #[error("no daily_analysis tool call: {0}")]
    NoCall(String),
}

/// The Planner as a supervised actor.
pub struct PlannerService {
    planner: ProactivePlanner,
}

impl PlannerService {
    pub fn new(planner: ProactivePlanner) -> Self {
        PlannerService { planner }
    }
}

impl Service for PlannerService {
    fn name(&self) -> &'static str {
        "Planner"
    }
}

pub struct Decide(pub PlannerContext);

impl Request for Decide {
    type Reply = Planned;
    fn failed(r: &Planned) -> bool {
        r.error.is_some()
    }
}

impl ServeAsync<Decide> for PlannerService {
    fn serve_async(&mut self, Decide(ctx): Decide) -> LocalBoxFuture<'static, Planned> {
        let planner = self.planner.clone();
        Box::pin(async move { planner.decide(ctx).await })
    }
}

/// The day's analysis, for the DailyAnalysisService.
pub struct AnalyzeDay(pub PlannerContext, pub chrono::NaiveDate);

impl Request for AnalyzeDay {
    type Reply = Result<DailyAnalysis, AnalysisError>;
    fn failed(r: &Self::Reply) -> bool {
        r.is_err()
    }
}

impl ServeAsync<AnalyzeDay> for PlannerService {
    fn serve_async(
        &mut self,
        AnalyzeDay(ctx, today): AnalyzeDay,
    ) -> LocalBoxFuture<'static, Result<DailyAnalysis, AnalysisError>> {
        let planner = self.planner.clone();
        Box::pin(async move { planner.analyze_day(&ctx, today).await })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_tests;
