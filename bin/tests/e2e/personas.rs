//! The personas benchmark (`scripts/personas.py`, the README's table) as a test: thirty days of
//! four people's lives, two in English and two in Chinese, with no model, each meeting the bar
//! (at least 80 % of the moments a thoughtful assistant would speak in, no restraint broken).
//! The script runs the real binary on each scenario and scores its report; its own rules are
//! checked first on made-up messages, so a scorer that finds nothing cannot pass for a good run.

use std::path::Path;
use std::process::Command;

#[test]
fn every_persona_is_anticipated_with_no_restraint_broken() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scorer = Command::new("python3").arg(root.join("scripts/personas.py")).arg("--self-test").output();
    let scorer = scorer.expect("python3 runs the scoring script");
    assert!(scorer.status.success(), "{}", String::from_utf8_lossy(&scorer.stderr));
    let run = Command::new("python3")
        .arg(root.join("scripts/personas.py"))
        .args(["--check", "--raven", env!("CARGO_BIN_EXE_raven")])
        .current_dir(&root)
        .env_remove("RAVEN_HOME")
        .output()
        .expect("python3 runs the scoring script");
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{stdout}{stderr}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| persona")).collect();
    assert_eq!(rows.len(), 5, "four personas and the total: {stdout}");
    assert!(rows.iter().any(|r| r.contains("李娜")) && rows.iter().any(|r| r.contains("Maya")), "{stdout}");
}
