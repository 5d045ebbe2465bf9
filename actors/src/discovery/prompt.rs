//! What a model reads to propose the day's tasks, within the prompt budget: the user's
//! preferences, the items due soon, the open tasks of HEARTBEAT.md, the newest history lines,
//! then the notes most relevant to now (see [`crate::llm::budget`]).

use crate::llm::budget::fit::{Fitter, Keep};
use crate::llm::budget::PromptBudget;
use crate::planner::budget::memory::MemoryParts;
use crate::time::DateOrder;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::sync::Arc;

#[allow(clippy::too_many_arguments)]
pub fn render(
    budget: &PromptBudget,
    allowance: usize,
    memory: &str,
    history: &str,
    heartbeat: &str,
    now: DateTime<Utc>,
    tz: Tz,
    order: DateOrder,
) -> String {
    let memory: Arc<str> = memory.into();
    let parts = MemoryParts::of(&memory, now, tz, order, history);
    let mut f = Fitter::new(budget.counter, allowance);
    f.part("Preferences (MEMORY.md)", parts.text(&parts.preferences), Keep::First);
    f.part("Due soon (MEMORY.md)", parts.text(&parts.due), Keep::First);
    f.part("HEARTBEAT.md", heartbeat.lines(), Keep::First);
    f.part("Recent history", history.lines(), Keep::Last);
    f.ranked("MEMORY.md (the notes most relevant now)", &parts.lines, &parts.relevant, false);
    f.finish()
}
