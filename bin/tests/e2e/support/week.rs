//! What the first-week tests share, one per channel kind (Telegram, Matrix, ntfy, the REPL):
//! `raven` commands that must succeed, and the closing check that each verdict given on the
//! phone is told by `raven why` and counted once by the supervisor.

use std::path::Path;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `raven <args>`, which must succeed: its stdout.
pub fn ok(dir: &Path, args: &[&str]) -> String {
    let out = super::raven(dir, args);
    assert!(out.status.success(), "raven {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// "later" on the bank's nudge and the stop on the rent's are in `raven why` and in the
/// supervisor's metrics, once each.
pub fn later_and_stop_are_told(dir: &Path) {
    assert!(ok(dir, &["why", "bank"]).contains("later"), "{}", ok(dir, &["why", "bank"]));
    assert!(ok(dir, &["why", "rent"]).contains("dismissed"), "{}", ok(dir, &["why", "rent"]));
    let metrics = ok(dir, &["metrics"]);
    for line in
        ["raven_feedback_verdicts_total{verdict=\"later\"} 1", "raven_feedback_verdicts_total{verdict=\"dismissed\"} 1"]
    {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
}
