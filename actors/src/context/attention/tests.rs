use super::*;
use chrono::TimeZone;

struct Fixed(&'static str, Result<&'static str, &'static str>);

impl Producer for Fixed {
    fn section(&self) -> &'static str {
        self.0
    }
    fn produce(&self, _: &ProducerInput) -> Result<String, ProduceError> {
        self.1.map(str::to_owned).map_err(ProduceError::Missing)
    }
}

struct Panics;

impl Producer for Panics {
    fn section(&self) -> &'static str {
        "Panics"
    }
    fn produce(&self, _: &ProducerInput) -> Result<String, ProduceError> {
        panic!("producer bug")
    }
}

fn input() -> ProducerInput {
    ProducerInput {
        order: Default::default(),
        now: Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).unwrap(),
        tz: Tz::UTC,
        memory_md: "- [ ] Submit taxes due: 2026-03-02 17:00 !high\n".into(),
        history_md: String::new(),
        routines: vec![Routine { topic: "medication".into(), hour: 9, days_seen: 3, days: Default::default() }],
        feedback: FeedbackSummary::default(),
        plan: Vec::new(),
        daily_analysis: None,
    }
}

#[test]
fn a_second_identical_tick_leaves_the_file_and_its_mtime_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attention.md");
    let u = AttentionUpdater::new(&path, producers::defaults());
    assert!(u.update(&input()).unwrap().written);
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("## Upcoming deadlines\n- 2026-03-02 17:00 Submit taxes (high)"), "{text}");
    assert!(text.contains("## Routines\n- medication around 09:00"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let report = u.update(&input()).unwrap();
    assert!(!report.written);
    assert_eq!(report.skipped, vec!["Daily focus"], "the LLM-backed producer is skipped, not failed");
    assert!(report.failed.is_empty());
    assert!(!text.contains("## Daily focus"));
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), before);
}

#[test]
fn a_section_edited_by_hand_between_two_identical_ticks_is_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attention.md");
    let u = AttentionUpdater::new(&path, producers::defaults());
    u.update(&input()).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    let edited = written.replace("- medication around 09:00", "- (cleared by hand)");
    std::fs::write(&path, format!("{edited}\n## Mine\nmy own words\n")).unwrap();
    assert!(u.update(&input()).unwrap().written, "the same bodies, but not the same file");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("- medication around 09:00") && !text.contains("(cleared by hand)"), "{text}");
    assert!(text.ends_with("## Mine\nmy own words\n"), "{text}");
    assert!(!u.update(&input()).unwrap().written);
}

#[test]
fn a_failing_producer_keeps_its_old_section_and_the_others_update() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attention.md");
    AttentionUpdater::new(&path, vec![Box::new(Fixed("A", Ok("a1"))), Box::new(Fixed("B", Ok("b1")))])
        .update(&input())
        .unwrap();
    let u = AttentionUpdater::new(
        &path,
        vec![Box::new(Fixed("A", Err("source down"))), Box::new(Fixed("B", Ok("b2"))), Box::new(Panics)],
    );
    let report = u.update(&input()).unwrap();
    assert!(report.written);
    assert_eq!(report.failed.len(), 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("## A\na1\n"), "{text}");
    assert!(text.contains("## B\nb2\n"), "{text}");
    assert!(!text.contains("## Panics"), "{text}");
}

#[test]
fn hand_written_sections_survive_every_update() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attention.md");
    let mine = "## My notes\nCall the plumber *before* Friday.\n   odd   spacing kept\n\n";
    std::fs::write(&path, format!("# Attention\n\n{mine}## Routines\nstale\n")).unwrap();
    let u = AttentionUpdater::new(&path, producers::defaults());
    for _ in 0..3 {
        u.update(&input()).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&format!("# Attention\n\n{mine}")), "{text}");
    assert!(!text.contains("stale"));
}

#[test]
fn a_fenced_look_alike_of_a_producer_heading_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("attention.md");
    let mine = "## My notes\r\n```markdown\r\n## Routines\r\n- made up\r\n```\r\nafter the fence\r\n";
    std::fs::write(&path, format!("# Attention\r\n\r\n{mine}\r\n## Routines\nstale\n\n## Last\r\nkept")).unwrap();
    let u = AttentionUpdater::new(&path, producers::defaults());
    for _ in 0..2 {
        u.update(&input()).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(&format!(
            "# Attention\r\n\r\n{mine}\r\n## Routines\n- medication around 09:00 (seen on 3 days)\n\n## Last\r\nkept\n\n"
        )),
        "{text:?}"
    );
    assert!(!text.contains("stale"));
}
