use super::read_memory::READ_BYTES;
use super::*;
use crate::agent::notes::MemoryNotes;
use crate::cron::tool::WhenSpec;
use crate::llm::provider::Role;
use chrono::{TimeZone, Utc};
use raven_proto::Origin;
use std::rc::Rc;

fn ctx() -> ToolCtx {
    let now = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap();
    ToolCtx { conversation_id: "c".into(), channel: "cli".into(), chat_id: "local".into(), now, origin: Origin::User }
}

async fn call(tool: &dyn Tool, args: Value) -> String {
    tool.call(&args, &ctx()).await
}

#[actix_rt::test]
async fn read_memory_answers_the_top_within_its_bound_or_the_lines_on_a_subject() {
    let tmp = tempfile::tempdir().unwrap();
    let memory = tmp.path().join("MEMORY.md");
    let tool = ReadMemoryTool { memory: memory.clone() };
    assert_eq!(call(&tool, json!({})).await, "MEMORY.md is empty");
    let mut text = String::from("# Me\n- the bike lock code is 4711\n");
    for i in 0..100_000 {
        text.push_str(&format!("- note {i}\n"));
    }
    std::fs::write(&memory, &text).unwrap();
    let top = call(&tool, json!({})).await;
    assert!(top.len() <= READ_BYTES + 64 && top.starts_with("# Me\n"), "{} bytes", top.len());
    assert!(top.ends_with("more lines: ask with a query)\n"), "{}", &top[top.len() - 80..]);
    assert_eq!(call(&tool, json!({"query": "Bike?"})).await, "2: - the bike lock code is 4711");
    assert_eq!(call(&tool, json!({"query": "passport"})).await, "no line of MEMORY.md mentions that");
}

#[actix_rt::test]
async fn remember_writes_its_own_section_and_is_not_for_a_micro_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let memory = tmp.path().join("MEMORY.md");
    std::fs::write(&memory, "## Proactivity preferences\n- quiet after 21\n").unwrap();
    let tool = RememberTool { notes: MemoryNotes { path: memory.clone(), tz: chrono_tz::UTC } };
    assert!(!tool.for_micro_agent() && ReadMemoryTool { memory: memory.clone() }.for_micro_agent());
    assert_eq!(call(&tool, json!({"note": "prefers tea"})).await, "kept in MEMORY.md: - 2026-03-02: prefers tea");
    assert_eq!(
        std::fs::read_to_string(&memory).unwrap(),
        "## Proactivity preferences\n- quiet after 21\n\n## Notes from Raven\n- 2026-03-02: prefers tea\n\n"
    );
    assert_eq!(call(&tool, json!({})).await, "error: the note is empty");
}

#[actix_rt::test]
async fn search_history_finds_the_users_words_and_ravens_newest_first_within_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("history.md");
    std::fs::write(
        &history,
        "2026-02-27 09:00 book the dentist\n2026-02-28 10:00 the dentist said tuesday\n2026-03-01 08:00 tea\n",
    )
    .unwrap();
    let sessions = tmp.path().join("sessions");
    let store = crate::sessions::SessionStore::new(&sessions);
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 18, 30, 0).unwrap();
    store.append("telegram", "42", Role::Assistant, "Your dentist is on Tuesday at 10", at).unwrap();
    store.append("heartbeat", "main", Role::Assistant, "dentist (the engine's own)", at).unwrap();
    let tool = SearchHistoryTool { history, sessions, tz: chrono_tz::UTC };
    let found = call(&tool, json!({"query": "Dentist"})).await;
    assert_eq!(
        found,
        "- 2026-03-01 18:30 Raven said on telegram:42: Your dentist is on Tuesday at 10\n\
         - 2026-02-28 10:00 you said: the dentist said tuesday\n\
         - 2026-02-27 09:00 you said: book the dentist"
    );
    let one = call(&tool, json!({"query": "dentist tuesday", "limit": 1})).await;
    assert_eq!(
        one,
        "- 2026-03-01 18:30 Raven said on telegram:42: Your dentist is on Tuesday at 10\n(1 older matches not shown)"
    );
    assert_eq!(call(&tool, json!({"query": "passport"})).await, "nothing found");
}

struct Jobs(Vec<String>);

impl CronJobs for Jobs {
    fn add(&self, _: &str, _: &WhenSpec, _: &ToolCtx) -> Result<String, crate::cron::tool::JobError> {
        unreachable!("list_jobs only lists")
    }
    fn list(&self) -> Result<Vec<String>, crate::cron::store::JobsError> {
        Ok(self.0.clone())
    }
    fn remove(&self, _: &str) -> Result<bool, crate::cron::store::JobsError> {
        unreachable!("list_jobs only lists")
    }
}

#[actix_rt::test]
async fn list_jobs_lists_and_can_change_nothing() {
    let tool = ListJobsTool { jobs: Rc::new(Jobs(vec!["ab12cd every day at 09:00: stretch".into()])) };
    assert_eq!(call(&tool, json!({"action": "remove", "id": "ab12cd"})).await, "ab12cd every day at 09:00: stretch");
    let none = ListJobsTool { jobs: Rc::new(Jobs(Vec::new())) };
    assert_eq!(call(&none, json!({})).await, "no reminders are scheduled");
}

#[actix_rt::test]
async fn arguments_that_do_not_fit_a_tool_s_args_are_told_to_the_model_and_none_read_as_empty() {
    let tool = CronTool { jobs: Rc::new(Jobs(Vec::new())) };
    let ctx = ctx();
    let said = tool.call(&json!({"action": "add", "message": "stretch", "every_s": "soon"}), &ctx).await;
    assert!(said.starts_with("error: the arguments of cron do not fit its schema: "), "{said}");
    let tmp = tempfile::tempdir().unwrap();
    let memory = ReadMemoryTool { memory: tmp.path().join("MEMORY.md") };
    assert_eq!(call(&memory, Value::Null).await, "MEMORY.md is empty");
}

#[actix_rt::test]
async fn nudge_feedback_without_an_id_rates_the_latest_message_of_the_conversation_it_is_called_in() {
    use crate::feedback::{Dispatch, NudgeFeedbackTracker, Source};
    let tmp = tempfile::tempdir().unwrap();
    let tracker =
        Rc::new(NudgeFeedbackTracker::new(tmp.path().join("feedback.jsonl"), Default::default(), chrono_tz::UTC));
    let sent = Dispatch::new("n1", "water", raven_proto::Priority::Low, Source::Sentinel);
    tracker.record_dispatched(&sent, Some("telegram:42"), true, ctx().now).unwrap();
    let tool = FeedbackTool { tracker };
    let elsewhere = tool.call(&json!({"verdict": "accepted"}), &ctx()).await;
    assert_eq!(elsewhere, "error: no proactive message in this conversation waits for a verdict");
    let there = ToolCtx { channel: "telegram".into(), chat_id: "42".into(), ..ctx() };
    assert_eq!(tool.call(&json!({"verdict": "accepted"}), &there).await, "recorded accepted for n1");
}
