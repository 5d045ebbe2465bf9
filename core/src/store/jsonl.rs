//! Logs of one JSON value a line (`*.jsonl`), read as bytes and decoded line by line: a bad
//! byte or a torn write spoils its own line, never the log. A line that does not parse is
//! skipped and reported once per process (naming the file and the line number), not on every
//! read: the engine reads some logs on every tick.

use super::fnv1a;
use serde::de::DeserializeOwned;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How many bad lines the process remembers having reported; past it the memory starts
/// over (a line may then be reported once more).
const MAX_SEEN: usize = 4096;

/// Why one line is not a record.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("it is not UTF-8 ({0})")]
    NotUtf8(#[from] std::str::Utf8Error),
    #[error("it does not parse ({0})")]
    Json(#[from] serde_json::Error),
}

/// The lines of `bytes` that are not blank, each with its line number (from 1) and without
/// its `\n`.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes.split(|b| *b == b'\n').enumerate().map(|(i, line)| (i + 1, line)).filter(|(_, l)| !l.trim_ascii().is_empty())
}

/// One line decoded on its own.
pub fn parse<T: DeserializeOwned>(line: &[u8]) -> Result<T, LineError> {
    Ok(serde_json::from_str(std::str::from_utf8(line)?)?)
}

/// Every line of the log at `path` that parses, in file order (none when there is no file);
/// the others are skipped and [reported](report).
pub fn read<T: DeserializeOwned>(path: &Path) -> std::io::Result<Vec<T>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(lines(&bytes)
        .filter_map(|(number, line)| parse(line).map_err(|e| report(path, number, line, &e)).ok())
        .collect())
}

/// Warns that line `number` of `path` is skipped, the first time this process sees that
/// line in that file.
pub fn report(path: &Path, number: usize, line: &[u8], why: &LineError) {
    if first_sight(path, line) {
        tracing::warn!("{}: line {number} is skipped: {why}", path.display());
    }
}

/// Whether `line` of the file at `path` is new to this process. Lines are remembered by
/// content (FNV-1a), not by number: a trim renumbers the lines, an append does not change
/// what is already there.
fn first_sight(path: &Path, line: &[u8]) -> bool {
    static SEEN: OnceLock<Mutex<HashSet<(PathBuf, u64)>>> = OnceLock::new();
    let mut seen = SEEN.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if seen.len() >= MAX_SEEN {
        seen.clear();
    }
    seen.insert((path.to_path_buf(), fnv1a(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_from_one_and_blank_ones_skipped() {
        let got: Vec<_> = lines(b"a\n\n  \nb\r\nc").collect();
        assert_eq!(got, vec![(1, &b"a"[..]), (4, &b"b\r"[..]), (5, &b"c"[..])]);
    }

    #[test]
    fn a_bad_line_is_new_once_per_file_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        assert!(first_sight(&a, b"{oops"));
        assert!(!first_sight(&a, b"{oops"), "seen already");
        assert!(first_sight(&a, b"{oops2"), "another line");
        assert!(first_sight(&b, b"{oops"), "another file");
    }

    #[test]
    fn a_bad_byte_spoils_its_line_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, b"{\"n\": 1}\n{\"n\": \"\xff\"}\n{\"n\": 3}\n").unwrap();
        let read: Vec<serde_json::Value> = read(&path).unwrap();
        assert_eq!(read, vec![serde_json::json!({"n": 1}), serde_json::json!({"n": 3})]);
        assert!(matches!(parse::<serde_json::Value>(b"{\"n\": \"\xff\"}"), Err(LineError::NotUtf8(_))));
    }
}
