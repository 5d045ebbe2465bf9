//! Property tests (bounded fuzzing) of the parsers and splicers that read text from outside:
//! `cron/jobs.json`, the planner's tool arguments, attention.md sections and menu replies.
//!
//! Each property runs `PROPTEST_CASES` cases (256 by default, so CI stays fast);
//! `scripts/fuzz.sh` runs them much longer in release. Every input that once broke one of
//! them is pinned below as a named regression test.

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use raven_actors::context::attention::sections::{chunk, code_chunk, find, select, splice, SpliceError};
use raven_actors::cron::pause::Paused;
use raven_actors::cron::store::{Claim, Job, JobState, JobsError, JobsFile, JobsStore, Schedule};
use raven_actors::discovery::{
    parse_reply, Choice, ChoiceAction, DecisionRouter, PendingDecision, PendingDecisionStore, PendingState, Routed,
    Said,
};
use raven_proto::wire::{self, MAX_FRAME};
use raven_proto::{Action, PlannerDecision, Priority};
use serde_json::{Map, Number, Value};
use std::path::Path;

/// `PROPTEST_CASES` when set (the fuzz script sets it high), else a CI-sized default.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    // No regressions file next to the tests: a failure found is pinned by hand as a named test.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------
// jobs.json
// ---------------------------------------------------------------------------------------

fn time() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..8_000_000_000, 0u32..1_000_000_000).prop_map(|(s, ns)| Utc.timestamp_opt(s, ns).unwrap())
}

fn schedule() -> impl Strategy<Value = Schedule> {
    let expr = prop_oneof![
        Just("0 9 * * *"),
        Just("*/5 * * * *"),
        Just("30 8 * * 1-5"),
        Just("0 0 1 * *"),
        Just("15 */2 * * * *"),
        Just("0 12 * * MON,FRI"),
    ];
    let tz = prop_oneof![Just("UTC"), Just("Europe/Paris"), Just("America/New_York"), Just("Asia/Kolkata")];
    prop_oneof![
        time().prop_map(|at| Schedule::At { at }),
        (1u64..=u64::MAX, time()).prop_map(|(every_s, anchor)| Schedule::Every { every_s, anchor }),
        (expr, tz).prop_map(|(e, z)| Schedule::Cron { expr: e.into(), tz: z.into() }),
    ]
}

fn job_state() -> impl Strategy<Value = JobState> {
    let claim = (any::<u32>(), time(), time()).prop_map(|(pid, at, slot)| Claim { pid, at, slot });
    (
        proptest::option::of(time()),
        proptest::option::of(time()),
        any::<u64>(),
        any::<u32>(),
        proptest::option::of(any::<String>()),
        proptest::option::of(claim),
        extra(),
    )
        .prop_map(|(next_run_at, last_run_at, runs, strikes, paused, claim, extra)| JobState {
            next_run_at,
            last_run_at,
            runs,
            strikes,
            paused: paused.map(Paused::from),
            claim,
            // A one-shot done is gone for readers: a round trip is of the jobs still live.
            done_at: None,
            extra,
        })
}

/// Fields no version knows (a prefix no field has), which a round trip keeps.
fn extra() -> impl Strategy<Value = serde_json::Map<String, serde_json::Value>> {
    proptest::collection::btree_map("x_[a-z]{1,6}", "\\PC{0,8}", 0..3)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect())
}

fn job() -> impl Strategy<Value = Job> {
    (
        "[a-z0-9_-]{1,12}|\\PC{0,12}",
        any::<String>(),
        schedule(),
        proptest::option::of("[a-z]{1,8}(:[a-z0-9é🦀]{1,8})?"),
        proptest::collection::vec("[a-z]{1,8}:[a-z0-9]{1,8}", 0..3),
        time(),
        any::<bool>(),
        proptest::option::of("\\PC{0,16}"),
        job_state(),
        extra(),
    )
        .prop_map(|(id, message, schedule, target, broadcast, created_at, enabled, topic, state, extra)| Job {
            id,
            message,
            schedule,
            target,
            broadcast,
            created_at,
            enabled,
            topic,
            state,
            extra,
        })
}

fn jobs_file() -> impl Strategy<Value = JobsFile> {
    proptest::collection::vec(job(), 0..5).prop_map(|jobs| JobsFile { jobs })
}

/// Bytes for a jobs.json: garbage, text, or a valid file cut, patched or with a byte dropped
/// (the near misses a hand edit makes).
fn jobs_bytes() -> impl Strategy<Value = Vec<u8>> {
    let valid = || jobs_file().prop_map(|f| serde_json::to_vec_pretty(&f).unwrap());
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..512),
        any::<String>().prop_map(String::into_bytes),
        prop_oneof![Just("{}"), Just("null"), Just("[]"), Just("{\"jobs\": null}"), Just("{\"jobs\": [{}]}")]
            .prop_map(|s| s.as_bytes().to_vec()),
        (valid(), any::<prop::sample::Index>()).prop_map(|(b, i)| b[..i.index(b.len() + 1)].to_vec()),
        (valid(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(mut b, i, x)| {
            let at = i.index(b.len() + 1);
            b.insert(at, x);
            b
        }),
        (valid(), any::<prop::sample::Index>()).prop_map(|(mut b, i)| {
            if !b.is_empty() {
                b.remove(i.index(b.len()));
            }
            b
        }),
    ]
}

fn a_job() -> Job {
    Job {
        id: "added".into(),
        message: "stretch".into(),
        schedule: Schedule::At { at: Utc.with_ymd_and_hms(2026, 3, 2, 12, 10, 0).unwrap() },
        target: Some("cli:local".into()),
        broadcast: Vec::new(),
        created_at: Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap(),
        enabled: true,
        topic: None,
        state: JobState::default(),
        extra: Default::default(),
    }
}

/// A load of `bytes` is a file or a `Malformed` error naming the file and a position; an
/// update of a file that does not load leaves it byte-identical.
fn check_jobs_bytes(dir: &Path, bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = dir.join("jobs.json");
    std::fs::write(&path, bytes).unwrap();
    let store = JobsStore::new(&path);
    match store.load() {
        Ok(_) => {}
        Err(JobsError::Malformed { path: p, line, column, message }) => {
            prop_assert_eq!(&p, &path);
            prop_assert!(line >= 1, "line {line}: {message}");
            let err = JobsError::Malformed { path: p, line, column, message }.to_string();
            prop_assert!(err.contains(&path.display().to_string()), "{err}");
            prop_assert!(err.contains(&format!("line {line}, column {column}")), "{err}");
            let update = store.update(|f| f.jobs.push(a_job()));
            prop_assert!(matches!(update, Err(JobsError::Malformed { .. })), "{update:?}");
            prop_assert_eq!(std::fs::read(&path).unwrap(), bytes, "a malformed file is never written over");
        }
        Err(other) => prop_assert!(false, "not a Malformed error: {other}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn jobs_json_any_bytes_load_or_are_malformed_and_left_untouched(bytes in jobs_bytes()) {
        let dir = tempfile::tempdir().unwrap();
        check_jobs_bytes(dir.path(), &bytes)?;
    }

    #[test]
    fn jobs_json_valid_files_round_trip_through_update_and_load(file in jobs_file()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cron/jobs.json");
        let store = JobsStore::new(&path);
        let (_, view) = store.update_viewed(|f| *f = file.clone()).unwrap();
        prop_assert_eq!(&view.file, &file);
        prop_assert_eq!(&store.load().unwrap(), &file);
        // A fresh store has no cache: this is the parse of what was written.
        prop_assert_eq!(&JobsStore::new(&path).load().unwrap(), &file);
        // Writing the same again changes nothing on disk.
        let before = std::fs::read(&path).ok();
        store.update(|f| *f = file.clone()).unwrap();
        prop_assert_eq!(std::fs::read(&path).ok(), before);
    }
}

#[test]
fn jobs_json_regression_invalid_utf8_is_malformed_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    check_jobs_bytes(dir.path(), b"{\"jobs\": [\n  {\"id\": \"caf\xe9\"}\n]}").unwrap();
    check_jobs_bytes(dir.path(), b"\xff").unwrap();
    let path = dir.path().join("jobs.json");
    std::fs::write(&path, b"{\"jobs\": [\n\xff]}").unwrap();
    let err = JobsStore::new(&path).load().unwrap_err();
    assert!(matches!(err, JobsError::Malformed { line: 2, column: 1, .. }), "{err}");
}

// ---------------------------------------------------------------------------------------
// Planner tool arguments
// ---------------------------------------------------------------------------------------

const FIELDS: [&str; 9] = [
    "action",
    "reason",
    "priority",
    "proactivity_score",
    "score",
    "nudge_message",
    "target_session",
    "spawn_task",
    "defer_condition",
];

fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(Action::ALL.map(Action::as_str).to_vec()).prop_map(String::from),
        2 => prop::sample::select(vec![
            "low", "medium", "high", " high ", "urgent", "", "   ", "\t\n", "0.8", "1e400", "-1e400", "NaN", "inf",
            "-0", "7", " 0.25 ", "nudge ", " spawn_agent", "NUDGE", "cli:local",
        ])
        .prop_map(String::from),
        3 => any::<String>(),
    ]
}

fn json_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-2.0f64..3.0).prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![0.0, 1.0, -0.0, f64::MAX, f64::MIN, f64::MIN_POSITIVE, 0.5])
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
    ]
}

fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![4 => prop::sample::select(FIELDS.to_vec()).prop_map(String::from), 1 => any::<String>()]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        json_number(),
        json_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((json_key(), inner), 0..10)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An object with each real field present or not, each with a value of its usual type or not:
/// most reach validation, which the fully random values rarely do.
fn tool_args() -> impl Strategy<Value = Value> {
    let field = |key: &'static str| {
        let value = prop_oneof![3 => json_string().prop_map(Value::String), 1 => json_number(), 1 => json_value()];
        proptest::option::weighted(0.7, value).prop_map(move |v| v.map(|v| (key.to_owned(), v)))
    };
    let fields: Vec<_> = FIELDS.iter().map(|k| field(k)).collect();
    fields.prop_map(|kv| Value::Object(kv.into_iter().flatten().collect()))
}

fn present(f: &Option<String>) -> bool {
    f.as_deref().is_some_and(|s| !s.trim().is_empty())
}

/// The invariants `from_tool_args` documents (spec §4 steps 3–5), checked against `args`.
fn check_decision(args: &Value) -> Result<(), TestCaseError> {
    let d = PlannerDecision::from_tool_args(args);
    prop_assert!((0.0..=1.0).contains(&d.proactivity_score), "score {}", d.proactivity_score);
    match d.action {
        Action::Skip => {}
        Action::Nudge | Action::NudgeInject => prop_assert!(present(&d.nudge_message), "{d:?}"),
        Action::NudgeDefer => prop_assert!(present(&d.nudge_message) && present(&d.defer_condition), "{d:?}"),
        Action::SpawnAgent => prop_assert!(present(&d.spawn_task), "{d:?}"),
    }
    // The text fields it keeps are trimmed and never blank.
    for s in [&d.target_session, &d.nudge_message, &d.spawn_task, &d.defer_condition].into_iter().flatten() {
        prop_assert!(!s.is_empty() && s.trim() == s, "{s:?}");
    }
    let Some(obj) = args.as_object() else {
        prop_assert_eq!(d.action, Action::Skip);
        prop_assert_eq!(d.reason.as_str(), "planner_error:args_not_object");
        prop_assert_eq!(&d.raw_llm_response, &None);
        return Ok(());
    };
    prop_assert_eq!(&d.raw_llm_response, &Some(args.to_string()));
    let asked = obj.get("action").and_then(Value::as_str).and_then(Action::parse);
    match asked {
        None => {
            prop_assert_eq!(d.action, Action::Skip);
            prop_assert!(d.reason.starts_with("invalid_action:"), "{}", d.reason);
        }
        Some(a) if a == d.action => {
            let priority = obj.get("priority").and_then(Value::as_str).and_then(Priority::parse);
            prop_assert_eq!(d.priority, priority.unwrap_or(Priority::Low));
            let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
            prop_assert_eq!(d.nudge_message.as_deref(), text("nudge_message"));
            prop_assert_eq!(d.spawn_task.as_deref(), text("spawn_task"));
            prop_assert_eq!(d.defer_condition.as_deref(), text("defer_condition"));
            prop_assert_eq!(d.target_session.as_deref(), text("target_session"));
            prop_assert_eq!(d.reason.as_str(), text("reason").unwrap_or(""));
            // A score in range, sent as a number, is kept as sent.
            if let Some(s) = obj.get("proactivity_score").and_then(Value::as_f64).filter(|s| (0.0..=1.0).contains(s)) {
                prop_assert_eq!(d.proactivity_score, s);
            }
        }
        // An inject with no conversation to ride is routed as a nudge, through the same gate.
        Some(Action::NudgeInject) if d.action == Action::Nudge => {
            prop_assert_eq!(&d.target_session, &None);
            prop_assert!(d.reason.starts_with("as_nudge:nudge_inject_without_target_session"), "{}", d.reason);
            let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
            prop_assert_eq!(d.nudge_message.as_deref(), text("nudge_message"));
        }
        Some(a) => {
            prop_assert_eq!(d.action, Action::Skip, "{} became {}", a, d.action);
            let prefix = format!("downgraded:{a}_without_");
            prop_assert!(d.reason.starts_with(&prefix), "{}", d.reason);
        }
    }
    // Validation is settled: validating again changes nothing.
    prop_assert_eq!(&d.clone().validated(), &d);
    // And the decision crosses the wire unchanged.
    let frame = wire::encode_frame(&d, MAX_FRAME).unwrap();
    let back: PlannerDecision = wire::decode_body(&frame[4..]).unwrap();
    prop_assert_eq!(&back, &d);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn planner_any_json_value_gives_a_valid_decision(args in json_value()) {
        check_decision(&args)?;
    }

    #[test]
    fn planner_tool_shaped_args_give_a_valid_decision(args in tool_args()) {
        check_decision(&args)?;
    }
}

// ---------------------------------------------------------------------------------------
// attention.md sections
// ---------------------------------------------------------------------------------------

/// A title, plain or not: one line, no surrounding whitespace (the reader trims a heading's
/// title). A title holding Markdown is refused by `splice`, and the property checks that.
fn title() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Routines",
            "Today's plan",
            "Mine",
            "Feedback",
            "Zeitplan für heute",
            "🦀 notes",
            ""
        ])
        .prop_map(String::from),
        "[^\n]{0,16}".prop_map(|s| s.trim().to_owned()),
    ]
}

/// Lines that look like headings, open or close code fences and blocks, or start lists.
const MD_LOOK_ALIKES: &[&str] = &[
    "",
    "#",
    "##",
    "##x",
    "### sub",
    "# Attention",
    " ## indented",
    "   ## Routines ##",
    "    ## Routines",
    "## Routines",
    "Routines",
    "---",
    "===",
    "```",
    "````md",
    "~~~",
    "> ## Routines",
    "- ## Routines",
    "- item",
    "<!--",
    "-->",
    "<div>",
    "\r",
];

/// One line of markdown, with its ending (none, `\n` or `\r\n`).
fn md_line() -> impl Strategy<Value = String> {
    let content = prop_oneof![
        3 => "\\PC{0,30}",
        1 => any::<String>(),
        2 => title().prop_map(|t| format!("## {t}")),
        1 => title().prop_map(|t| format!("##  {t}  ")),
        3 => prop::sample::select(MD_LOOK_ALIKES.to_vec()).prop_map(String::from),
    ];
    let end = prop_oneof![4 => Just(""), 1 => Just("\r")];
    let eol = prop_oneof![6 => Just("\n"), 2 => Just("\r\n"), 1 => Just("")];
    (content, end, eol).prop_map(|(c, e, l)| format!("{c}{e}{l}"))
}

/// A document: lines that open and close fences, quote headings, mix line endings.
fn markdown() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::collection::vec(md_line(), 0..16).prop_map(|l| l.concat()),
        1 => any::<String>(),
    ]
}

/// A section body, headings and open fences included: `splice` keeps them inside.
fn body() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => "\\PC{0,40}",
        1 => any::<String>(),
        2 => prop::sample::select(MD_LOOK_ALIKES.to_vec()).prop_map(String::from),
        1 => Just("- [ ] task".to_owned()),
    ];
    let eol = prop_oneof![Just("\n"), Just("\r\n"), Just("\n\n"), Just("")];
    proptest::collection::vec((line, eol), 0..8)
        .prop_map(|l| l.into_iter().map(|(a, b)| format!("{a}{b}")).collect::<String>())
}

fn titles(text: &str) -> Vec<String> {
    find(text).into_iter().map(|s| s.title).collect()
}

/// The text of the first section titled `title`.
fn read_section<'a>(text: &'a str, title: &str) -> Option<&'a str> {
    let span = find(text).into_iter().find(|s| s.title == title)?.span;
    text.get(span)
}

/// Whether `section` is what splicing `body` under `title` writes: as it is, or as code.
fn is_written(section: &str, title: &str, body: &str) -> bool {
    section == chunk(title, body) || section == code_chunk(title, body)
}

/// Why a refused splice was right to refuse: the title holds Markdown, or the section was
/// missing and the file ends inside a block (not a fence) that would swallow it.
fn check_refusal(text: &str, title: &str, e: &SpliceError) -> Result<(), TestCaseError> {
    match e {
        SpliceError::TitleNotPlain(_) => prop_assert_ne!(titles(&format!("## {title}\n")), vec![title.to_owned()]),
        SpliceError::WouldDisturb(_) => {
            prop_assert!(!titles(text).iter().any(|t| t == title), "{:?}", text);
            let probed = format!("{text}\n\n## probe\n");
            let appended = find(&probed).last().map(|s| s.span.start);
            prop_assert_ne!(appended, Some(text.len() + 2), "{:?}", text);
        }
    }
    Ok(())
}

fn check_splice(text: &str, title: &str, body: &str) -> Result<(), TestCaseError> {
    let out = match splice(text, title, body) {
        Ok(out) => out,
        Err(e) => return check_refusal(text, title, &e),
    };
    // Idempotent, and what reads back is the body as written.
    prop_assert_eq!(&splice(&out, title, body), &Ok(out.clone()));
    let written = read_section(&out, title).unwrap_or_default();
    prop_assert!(is_written(written, title, body), "{:?}", out);
    let mut want = titles(text);
    match find(text).into_iter().find(|s| s.title == title) {
        Some(old) => {
            // Replaced in place: every byte before and after the section is as it was.
            prop_assert_eq!(&out[..old.span.start], &text[..old.span.start]);
            prop_assert_eq!(&out[old.span.start..old.span.start + written.len()], written);
            prop_assert_eq!(&out[old.span.start + written.len()..], &text[old.span.end..]);
        }
        None => {
            // Appended: the text is kept whole, followed by line breaks (and a closing fence
            // when it ended inside one).
            prop_assert!(out.starts_with(text) && out.ends_with(written), "{:?}", out);
            let sep = &out[text.len()..out.len() - written.len()];
            prop_assert!(sep.chars().all(|c| matches!(c, '\n' | '`' | '~')), "separator {:?}", sep);
            want.push(title.to_owned());
        }
    }
    // Every other section is still a section.
    prop_assert_eq!(titles(&out), want);
    // With one section of that title, `select` gives it whole.
    if titles(&out).iter().filter(|t| *t == title).count() == 1 {
        prop_assert_eq!(select(&out, &[title.to_owned()]), written.trim_end());
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn attention_splice_reads_back_is_idempotent_and_keeps_the_rest(
        text in markdown(), title in title(), body in body(),
    ) {
        check_splice(&text, &title, &body)?;
    }

    #[test]
    fn attention_splicing_every_section_in_turn_keeps_each(
        text in markdown(),
        edits in proptest::collection::vec((title(), body()), 1..5),
    ) {
        // As the updater does: a refused splice leaves the text as it was.
        let mut out = text;
        let mut last = std::collections::HashMap::new();
        for (title, body) in &edits {
            match splice(&out, title, body) {
                Ok(next) => {
                    out = next;
                    last.insert(title, Some(body));
                }
                Err(_) => {
                    last.insert(title, None);
                }
            }
        }
        // The last edit of each title, when it was not refused, is what reads back.
        for (title, body) in last.into_iter().filter_map(|(t, b)| Some((t, b?))) {
            let section = read_section(&out, title).unwrap_or_default();
            prop_assert!(is_written(section, title, body), "{:?} in {:?}", title, out);
        }
    }
}

#[test]
fn attention_regression_splicing_leaves_a_preamble_without_a_blank_line_alone() {
    let text = "# Attention\n## Routines\nold\n";
    assert_eq!(splice(text, "Routines", "new"), Ok("# Attention\n## Routines\nnew\n\n".to_owned()));
    check_splice(text, "Routines", "new").unwrap();
    check_splice(text, "Mine", "x").unwrap();
}

#[test]
fn attention_regression_a_fenced_look_alike_heading_is_not_a_section() {
    let text = "## Mine\n```\n## Routines\n```\nafter the fence\n";
    let out = splice(text, "Routines", "- new").unwrap();
    assert_eq!(out, format!("{text}\n## Routines\n- new\n\n"));
    check_splice(text, "Routines", "- new").unwrap();
}

// ---------------------------------------------------------------------------------------
// Menu replies and the DecisionRouter
// ---------------------------------------------------------------------------------------

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap()
}

const SESSION: &str = "cli:local";

fn menu3() -> PendingDecision {
    PendingDecision {
        id: String::new(),
        session: SESSION.into(),
        question: "Anything I can take off your plate?".into(),
        options: (1..=3)
            .map(|i| Choice {
                title: format!("option {i}"),
                reason: "why".into(),
                action: ChoiceAction::Reply { text: format!("did {i}") },
                confirm: false,
            })
            .collect(),
        created_at: t0(),
        expires_at: t0() + Duration::hours(4),
        state: PendingState::Open,
    }
}

/// A router over a fresh store holding one live, open 3-option menu; no classifier.
fn router(dir: &tempfile::TempDir) -> (DecisionRouter, PendingDecision) {
    let store = PendingDecisionStore::new(raven_actors::store::JsonStateStore::new(dir.path().join("pending.json")));
    let m = store.offer(menu3(), t0()).unwrap();
    (DecisionRouter { store, classifier: None, threshold: 0.8 }, m)
}

fn route(r: &DecisionRouter, text: &str) -> Routed {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(r.route(SESSION, text, t0())).unwrap()
}

/// How a pick of `n` may be written.
fn pick_text(n: usize) -> impl Strategy<Value = String> {
    let pad = prop::sample::select(vec!["", " ", "  ", "\t", "\n", "\r\n"]);
    let end = prop::sample::select(vec!["", ".", "!", "!!", ".!"]);
    let form = prop::sample::select(vec!["{n}", "/pick {n}", "/PICK {n}", "/pick  {n}", "/pick\t{n}"]);
    (pad.clone(), form, end, pad).prop_map(move |(a, f, e, b)| format!("{a}{}{e}{b}", f.replace("{n}", &n.to_string())))
}

fn other_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "\\PC{0,30}",
        prop::sample::select(vec![
            "yes",
            "no",
            "ok",
            "2 coffees please",
            "/pick",
            "/pick a b c",
            "/pickup 2",
            "/picky 1",
            "/pick2x",
            "the second one",
            "-1",
            "1.5",
            "２",
            "/pick -1",
        ])
        .prop_map(String::from),
    ]
    .prop_filter("not a pick", |t| !matches!(parse_reply(t), Said::Pick { .. }))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn parse_reply_never_panics(text in prop_oneof![any::<String>(), "/pick\\PC{0,20}", "(/pick)? ?[0-9]{0,25}[.!]*"]) {
        let _ = parse_reply(&text);
    }

    #[test]
    fn parse_reply_reads_any_number_as_a_pick((n, text) in any::<usize>().prop_flat_map(|n| (Just(n), pick_text(n)))) {
        prop_assert_eq!(parse_reply(&n.to_string()), Said::Pick { menu: None, n });
        prop_assert_eq!(parse_reply(&format!("/pick {n}")), Said::Pick { menu: None, n });
        prop_assert_eq!(parse_reply(&text), Said::Pick { menu: None, n }, "{:?}", text);
    }

    #[test]
    fn parse_reply_reads_a_named_pick(id in "[a-z][a-z0-9]{0,6}", n in any::<usize>()) {
        prop_assert_eq!(parse_reply(&format!("/pick {id} {n}")), Said::Pick { menu: Some(id.clone()), n });
        prop_assert_eq!(parse_reply(&format!("/pick {} {n}", id.to_uppercase())), Said::Pick { menu: Some(id), n });
    }

    #[test]
    fn parse_reply_needs_a_break_after_the_pick_command(word in "[a-z0-9]{1,8}", n in any::<usize>()) {
        prop_assert_eq!(parse_reply(&format!("/pick{word} {n}")), Said::Other);
    }

    #[test]
    fn router_a_pick_in_range_runs_exactly_once((n, reply) in (1usize..=3).prop_flat_map(|n| (Just(n), pick_text(n)))) {
        let dir = tempfile::tempdir().unwrap();
        let (r, m) = router(&dir);
        match route(&r, &reply) {
            Routed::Run { menu, choice } => prop_assert_eq!((menu.id, choice), (m.id.clone(), n - 1)),
            other => prop_assert!(false, "{reply:?}: {other:?}"),
        }
        prop_assert_eq!(route(&r, &reply), Routed::PassThrough, "settled: the same reply is just text");
        let named = format!("/pick {} {n}", m.id);
        prop_assert!(matches!(route(&r, &named), Routed::Answer(_)), "a settled menu runs nothing");
        prop_assert_eq!(r.store.get(&m.id).unwrap().unwrap().state, PendingState::Done { choice: n - 1 });
    }

    #[test]
    fn router_a_named_pick_in_range_runs_exactly_once(n in 1usize..=3) {
        let dir = tempfile::tempdir().unwrap();
        let (r, m) = router(&dir);
        let reply = format!("/pick {} {n}", m.id);
        let first = route(&r, &reply);
        prop_assert!(matches!(first, Routed::Run { choice, .. } if choice == n - 1), "{first:?}");
        let again = route(&r, &reply);
        prop_assert!(matches!(again, Routed::Answer(_)), "{again:?}");
        prop_assert_eq!(route(&r, &n.to_string()), Routed::PassThrough);
    }

    #[test]
    fn router_a_pick_out_of_range_is_answered_and_runs_nothing(
        n in prop_oneof![Just(0usize), 4usize..=usize::MAX],
        form in 0..3usize,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (r, m) = router(&dir);
        let reply = match form {
            0 => n.to_string(),
            1 => format!("/pick {n}"),
            _ => format!("/pick {} {n}", m.id),
        };
        let out = route(&r, &reply);
        prop_assert_eq!(out, Routed::Answer(format!("There is no option {n}: pick 1–3 (menu {}).", m.id)));
        prop_assert_eq!(r.store.get(&m.id).unwrap().unwrap().state, PendingState::Open);
        prop_assert!(matches!(route(&r, "1"), Routed::Run { choice: 0, .. }), "the menu is still open");
    }

    #[test]
    fn router_any_other_text_passes_through_untouched(text in other_text()) {
        let dir = tempfile::tempdir().unwrap();
        let (r, m) = router(&dir);
        let before = std::fs::read(dir.path().join("pending.json")).unwrap();
        prop_assert_eq!(route(&r, &text), Routed::PassThrough);
        prop_assert_eq!(std::fs::read(dir.path().join("pending.json")).unwrap(), before);
        prop_assert_eq!(r.store.get(&m.id).unwrap().unwrap().state, PendingState::Open);
    }
}

#[test]
fn router_regression_a_word_starting_with_pick_is_not_a_pick() {
    assert_eq!(parse_reply("/pickup 2"), Said::Other);
    assert_eq!(parse_reply("/picky m1 2"), Said::Other);
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = router(&dir);
    assert_eq!(route(&r, "/pickup 2"), Routed::PassThrough);
    assert_eq!(route(&r, "/pickm1 2"), Routed::PassThrough);
}
