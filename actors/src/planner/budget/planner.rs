//! The Planner's context rendered within its allowance, in the order of what is kept (see
//! [the budget](super)).

use super::memory::MemoryParts;
use crate::llm::budget::fit::{Fitter, Keep};
use crate::llm::budget::PromptBudget;
use crate::planner::prompts;
use crate::time::DateOrder;
use raven_proto::PlannerContext;

/// `ctx` as the Planner reads it, in at most `allowance` tokens.
pub fn render(ctx: &PlannerContext, budget: &PromptBudget, allowance: usize, order: DateOrder) -> String {
    let tz: chrono_tz::Tz = ctx.timezone.parse().unwrap_or(chrono_tz::Tz::UTC);
    let sessions = prompts::session_lines(ctx);
    let recent = format!("{}\n{}\n{}", sessions.join("\n"), ctx.attention_md, last_lines(&ctx.history_md_recent, 20));
    let memory = MemoryParts::of(&ctx.memory_md, ctx.now, tz, order, &recent);
    let mut f = Fitter::new(budget.counter, allowance);
    f.whole(&prompts::frame(ctx));
    f.part("Preferences", memory.text(&memory.preferences), Keep::First);
    let mut due: Vec<String> = memory.text(&memory.due).into_iter().map(str::to_owned).collect();
    due.extend(prompts::calendar_lines(ctx));
    f.part("Due soon", due.iter().map(String::as_str), Keep::First);
    f.part("Attention", ctx.attention_md.lines(), Keep::First);
    f.part("Active sessions", sessions.iter().map(String::as_str), Keep::Last);
    f.part("Recent history", ctx.history_md_recent.lines(), Keep::Last);
    f.part("Fire history (last 7 days)", prompts::fire_lines(ctx).iter().map(String::as_str), Keep::First);
    f.part("Routines", prompts::routine_lines(ctx).iter().map(String::as_str), Keep::First);
    f.part("Recent behaviour", ctx.behaviors_recent.lines(), Keep::Last);
    f.ranked("Memory (the notes most relevant now)", &memory.lines, &memory.relevant, false);
    f.finish()
}

/// The last `n` lines of `text`.
fn last_lines(text: &str, n: usize) -> &str {
    let start = text.rmatch_indices('\n').nth(n).map_or(0, |(i, _)| i + 1);
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn a_long_memory_is_cut_to_the_allowance_keeping_what_comes_first() {
        let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
        let mut ctx = PlannerContext::empty(now);
        let mut memory = String::from("## Proactivity preferences\n- no nudges before 9\n\n## Notes\n");
        for i in 0..50_000 {
            memory.push_str(&format!("- note {i}: something the user said once\n"));
        }
        memory.push_str("- [ ] taxes due: 2026-03-02 17:00 !high\n");
        ctx.memory_md = memory.into();
        ctx.history_md_recent = (0..1000).map(|i| format!("2026-03-01 10:00 said {i}\n")).collect();
        let budget = PromptBudget::default();
        let out = render(&ctx, &budget, 1500, DateOrder::MonthFirst);
        assert!(budget.count(&out) <= 1500, "{} tokens", budget.count(&out));
        assert!(out.contains("- no nudges before 9") && out.contains("taxes due"), "{out}");
        assert!(out.contains("said 999\n") && !out.contains("said 0\n"), "the newest history: {out}");
        assert!(!out.contains("# Memory"), "the conversation comes before the excerpts: {out}");
        ctx.history_md_recent = "2026-03-01 10:00 said hello\n".into();
        let out = render(&ctx, &budget, 1500, DateOrder::MonthFirst);
        let excerpts = out.split("# Memory (the notes most relevant now)\n").nth(1).unwrap_or_default();
        assert!(excerpts.contains("- note 49999:") && !excerpts.contains("- note 0:"), "the newest notes: {out}");
        assert!(budget.count(&out) <= 1500, "{} tokens", budget.count(&out));
    }
}
