//! The one-time move of session files from an older release's names (`/` and `\` replaced by
//! `_`, so several conversations could meet in one file) to the encoded names of
//! [`super::file_name`]. It runs under the sessions directory's lock, at most once (a
//! `.layout` file records it), and never merges two files: every old name reads as exactly one
//! `(channel, chat_id)`, and every pair has its own new name. A file that was already shared
//! by two conversations stays one file: what was mixed cannot be told apart again.

use super::file_name;
use crate::store::FileLock;
use std::path::{Path, PathBuf};

/// Written once the names are in the current layout.
const LAYOUT_FILE: &str = ".layout";
const LAYOUT: &str = "2\n";
/// An old file on its way to its new name (what a crash between the two renames leaves).
const MOVING: &str = ".moving";

#[derive(Debug, Default, PartialEq)]
pub struct Migration {
    /// `(old name, new name)` of every file renamed.
    pub renamed: Vec<(String, String)>,
    /// Files left where they were, with why.
    pub left: Vec<(String, String)>,
}

/// Renames the session files of `dir` into the current layout, once.
pub fn migrate(dir: &Path) -> std::io::Result<Migration> {
    if is_current(dir) {
        return Ok(Migration::default());
    }
    std::fs::create_dir_all(dir)?;
    let _lock = FileLock::exclusive(&dir.join(".layout.lock"))?;
    if is_current(dir) {
        return Ok(Migration::default());
    }
    let mut report = Migration::default();
    let moving = set_aside_old_names(dir, &mut report)?;
    for (from, old_name, new_name) in moving {
        settle(dir, &from, old_name, new_name, &mut report)?;
    }
    crate::store::write_atomic(&dir.join(LAYOUT_FILE), LAYOUT.as_bytes())?;
    for (old, new) in &report.renamed {
        tracing::info!("session file renamed to its unambiguous name: {old} -> {new}");
    }
    for (name, why) in &report.left {
        tracing::warn!("session file {} left under its old name: {why}", dir.join(name).display());
    }
    Ok(report)
}

fn is_current(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(LAYOUT_FILE)).is_ok_and(|t| t == LAYOUT)
}

/// Step one: every file whose name changes is renamed to `<old>.moving`, so no new name can
/// meet an old file that has not moved yet.
fn set_aside_old_names(dir: &Path, report: &mut Migration) -> std::io::Result<Vec<(PathBuf, String, String)>> {
    let mut moving = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        let old_name = name.strip_suffix(MOVING).unwrap_or(&name).to_owned();
        let Some((channel, chat)) = file_name::parse_legacy(&old_name) else { continue };
        let new_name = match file_name::file_name(&channel, &chat) {
            Ok(n) => n,
            Err(e) => {
                report.left.push((name, e.to_string()));
                continue;
            }
        };
        if new_name == name {
            continue;
        }
        let from = dir.join(format!("{old_name}{MOVING}"));
        if name != format!("{old_name}{MOVING}") {
            std::fs::rename(entry.path(), &from)?;
        }
        moving.push((from, old_name, new_name));
    }
    Ok(moving)
}

/// Step two: each set-aside file takes its new name, unless a file already has it.
fn settle(dir: &Path, from: &Path, old: String, new: String, report: &mut Migration) -> std::io::Result<()> {
    let to = dir.join(&new);
    if to.exists() {
        std::fs::rename(from, dir.join(&old))?;
        report.left.push((old, format!("{new} exists already")));
        return Ok(());
    }
    std::fs::rename(from, to)?;
    report.renamed.push((old, new));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        v.retain(|n| !n.starts_with(".layout"));
        v.sort();
        v
    }

    #[test]
    fn old_names_move_once_without_two_files_meeting() {
        let dir = tempfile::tempdir().unwrap();
        // `webhook_x%5Fy` was an id with a literal `%5F`; its new name escapes the `%`, and the
        // old `webhook_x_y` takes the name the other had: no file is overwritten.
        for (name, body) in [
            ("telegram_42.jsonl", "a"),
            ("webhook_alice_1.jsonl", "b"),
            ("webhook_x%5Fy.jsonl", "c"),
            ("webhook_x_y.jsonl", "d"),
            ("notes.txt", "e"),
        ] {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        let report = migrate(dir.path()).unwrap();
        assert_eq!(report.left, []);
        assert_eq!(
            names(dir.path()),
            [
                "notes.txt",
                "telegram_42.jsonl",
                "webhook_alice%5F1.jsonl",
                "webhook_x%255Fy.jsonl",
                "webhook_x%5Fy.jsonl"
            ]
        );
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(
            [read("webhook_alice%5F1.jsonl"), read("webhook_x%255Fy.jsonl"), read("webhook_x%5Fy.jsonl")],
            ["b", "c", "d"]
        );
        // Once: a file written later under a legacy-looking name is a new-layout name.
        std::fs::write(dir.path().join("webhook_p_q.jsonl"), "e").unwrap();
        assert_eq!(migrate(dir.path()).unwrap(), Migration::default());
        assert!(dir.path().join("webhook_p_q.jsonl").exists());
    }

    #[test]
    fn a_move_cut_short_by_a_crash_is_finished_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("webhook_a_b.jsonl.moving"), "x").unwrap();
        let report = migrate(dir.path()).unwrap();
        assert_eq!(report.renamed, [("webhook_a_b.jsonl".to_owned(), "webhook_a%5Fb.jsonl".to_owned())]);
        assert_eq!(names(dir.path()), ["webhook_a%5Fb.jsonl"]);
    }

    #[test]
    fn a_name_the_new_layout_cannot_hold_is_left_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("webhook_{}.jsonl", "é".repeat(60));
        std::fs::write(dir.path().join(&name), "x").unwrap();
        let report = migrate(dir.path()).unwrap();
        assert_eq!(report.left.len(), 1);
        assert!(dir.path().join(&name).exists());
    }
}
