//! Phase one of a heartbeat tick (spec §11): does HEARTBEAT.md hold active tasks? The LLM
//! answers through the virtual `heartbeat_decision` tool, never in free text, so nothing
//! here parses prose. A text answer or arguments that do not fit are a skip.
//!
//! The contract with the providers: the request forces `tool_choice = heartbeat_decision`,
//! the HEARTBEAT.md text is the content of the last user message (after a `# HEARTBEAT.md`
//! heading line), and the arguments are
//! `{"action": "run" | "skip", "tasks": ["…"], "reason": "…"}` (`tasks` non-empty on run).
//! The embedded rules provider answers it with [`open_tasks`].

use crate::llm::budget::PromptBudget;
use crate::llm::provider::{Caller, ChatMessage, CompletionRequest, Generation, ProviderReply, ToolSchema};
use serde_json::{json, Value};

pub const TOOL_NAME: &str = "heartbeat_decision";

/// Pinned: a yes/no with a short task list.
pub const DECISION_GENERATION: Generation = Generation { max_tokens: 300, temperature: 0.0, caller: Caller::Heartbeat };

pub const SYSTEM_PROMPT: &str = "\
You review the user's HEARTBEAT.md, a list of standing tasks the assistant should work on \
periodically. Decide whether any task is active now. Answer only by calling the \
heartbeat_decision tool: action \"run\" with the active tasks (copied as written), or \
action \"skip\" when nothing is to be done (every item checked, or only notes).";

/// The heading line before the file text in the user message.
pub const FILE_HEADING: &str = "# HEARTBEAT.md";

pub fn tool_schema() -> ToolSchema {
    ToolSchema {
        name: TOOL_NAME.into(),
        description: "Record whether HEARTBEAT.md has active tasks to run now.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["run", "skip"]},
                "tasks": {"type": "array", "items": {"type": "string"}, "description": "the active tasks, on run"},
                "reason": {"type": "string"}
            },
            "required": ["action", "reason"]
        }),
    }
}

/// The forced call for the file text `heartbeat_md`, its first lines within `budget`.
pub fn request(heartbeat_md: &str, budget: &PromptBudget) -> CompletionRequest {
    let tool = tool_schema();
    let schema = tool.parameters.to_string();
    let allowance = budget.left_after([SYSTEM_PROMPT, FILE_HEADING, schema.as_str(), tool.description.as_str()], 2);
    let text = budget.first_lines(heartbeat_md, allowance);
    CompletionRequest {
        messages: vec![ChatMessage::system(SYSTEM_PROMPT), ChatMessage::user(format!("{FILE_HEADING}\n{text}"))],
        tools: vec![tool],
        tool_choice: Some(TOOL_NAME.into()),
        generation: DECISION_GENERATION,
        context: None,
    }
}

/// What phase one decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Run { tasks: Vec<String>, reason: String },
    Skip { reason: String },
}

/// The provider's answer as a decision; anything but a well-formed tool call is a skip with
/// the reason (`no_tool_call`, `unexpected_tool:…`, `bad_args:…`).
pub fn parse(reply: &ProviderReply) -> Decision {
    let skip = |reason: String| Decision::Skip { reason };
    let arguments = match reply.first_call() {
        None => return skip("no_tool_call".into()),
        Some(call) if call.name != TOOL_NAME => return skip(format!("unexpected_tool:{}", call.name)),
        Some(call) => &call.arguments,
    };
    let Some(args) = arguments.as_object() else { return skip("bad_args:not an object".into()) };
    let reason = args.get("reason").and_then(Value::as_str).unwrap_or_default().trim().to_owned();
    match args.get("action").and_then(Value::as_str) {
        Some("skip") => skip(if reason.is_empty() { "nothing to do".into() } else { reason }),
        Some("run") => {
            let tasks: Option<Vec<String>> = args.get("tasks").and_then(Value::as_array).map(|a| {
                a.iter().filter_map(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect()
            });
            match tasks {
                Some(tasks) if !tasks.is_empty() => Decision::Run { tasks, reason },
                _ => skip("bad_args:run without tasks".into()),
            }
        }
        Some(other) => skip(format!("bad_args:unknown action `{other}`")),
        None => skip("bad_args:no action".into()),
    }
}

/// The text without `<!-- … -->` comments (an unterminated one runs to the end).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = rest[start + 4..].find("-->").map_or("", |end| &rest[start + 4 + end + 3..]);
    }
    out.push_str(rest);
    out
}

/// Nothing a heartbeat could act on: only blank lines, headings, HTML comments and empty
/// checkboxes (the shape of a fresh template). Such a file costs no LLM call.
pub fn is_blank(text: &str) -> bool {
    without_comments(text).lines().map(str::trim).all(|l| {
        l.is_empty() || l.starts_with('#') || ["- [ ]", "* [ ]", "- [x]", "* [x]", "- [X]", "* [X]"].contains(&l)
    })
}

/// The unchecked markdown task items (`- [ ] …` or `* [ ] …`, at any indent), outside
/// comments, in file order.
pub fn open_tasks(text: &str) -> Vec<String> {
    without_comments(text)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix("- [ ]").or_else(|| l.strip_prefix("* [ ]"))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The rules provider's answer: run the unchecked tasks, else skip.
pub fn rules_decision(heartbeat_md: &str) -> Value {
    let tasks = open_tasks(heartbeat_md);
    if tasks.is_empty() {
        json!({"action": "skip", "tasks": [], "reason": "no unchecked task in HEARTBEAT.md"})
    } else {
        let reason = format!("{} unchecked task(s) in HEARTBEAT.md", tasks.len());
        json!({"action": "run", "tasks": tasks, "reason": reason})
    }
}

/// The file text of a heartbeat request: its last user message, without the heading line.
pub fn file_text(req: &CompletionRequest) -> &str {
    use crate::llm::provider::Role;
    let last = req.messages.iter().rev().find(|m| m.role == Role::User).map_or("", |m| m.content.as_str());
    last.strip_prefix(FILE_HEADING).map_or(last, |rest| rest.strip_prefix('\n').unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: Value) -> ProviderReply {
        ProviderReply::call(TOOL_NAME, args)
    }

    #[test]
    fn only_a_well_formed_tool_call_runs() {
        let run = parse(&call(json!({"action": "run", "tasks": ["water the plants"], "reason": "open"})));
        assert_eq!(run, Decision::Run { tasks: vec!["water the plants".into()], reason: "open".into() });
        let skip = parse(&call(json!({"action": "skip", "reason": "all done"})));
        assert_eq!(skip, Decision::Skip { reason: "all done".into() });
        let reason = |r: &ProviderReply| match parse(r) {
            Decision::Skip { reason } => reason,
            d => panic!("{d:?}"),
        };
        assert_eq!(reason(&ProviderReply::Text("yes, run the tasks".into())), "no_tool_call");
        assert_eq!(reason(&ProviderReply::call("planner_decision", json!({}))), "unexpected_tool:planner_decision");
        assert_eq!(reason(&call(json!("run"))), "bad_args:not an object");
        assert_eq!(reason(&call(json!({"action": "run", "tasks": [], "reason": "r"}))), "bad_args:run without tasks");
        assert_eq!(reason(&call(json!({"action": "run", "reason": "r"}))), "bad_args:run without tasks");
        assert_eq!(reason(&call(json!({"action": "go", "reason": "r"}))), "bad_args:unknown action `go`");
        assert_eq!(reason(&call(json!({"tasks": ["x"]}))), "bad_args:no action");
    }

    #[test]
    fn unchecked_items_are_open_tasks_and_checked_ones_or_prose_are_not() {
        let md = "# Heartbeat\nSome notes about - [ ] inline.\n- [ ] water the plants\n  * [ ] check the backup log\n- [x] pay rent\n<!-- - [ ] template example -->\n- [ ]\n";
        assert_eq!(open_tasks(md), vec!["water the plants", "check the backup log"]);
        assert!(open_tasks("- [x] done\n* [X] also done\nJust prose.\n").is_empty());
    }

    #[test]
    fn a_template_of_headings_comments_and_empty_boxes_is_blank() {
        for blank in ["", " \n\n\t", "# Heartbeat\n\n<!-- add tasks\nbelow -->\n- [ ]\n## Later\n"] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for not in ["- [ ] water the plants", "- [x] done already", "Check the mail."] {
            assert!(!is_blank(not), "{not:?}");
        }
    }

    #[test]
    fn the_file_text_is_the_last_user_message_after_the_heading() {
        assert_eq!(file_text(&request("- [ ] a\n- [x] b", &Default::default())), "- [ ] a\n- [x] b");
        assert_eq!(request("x", &Default::default()).tool_choice.as_deref(), Some(TOOL_NAME));
    }
}
