//! Where the last learn stopped reading the history: a byte offset just after a newline,
//! with fingerprints that tell whether the file there is still the one that was read.
//!
//! The history only grows by appends, except when it is rotated (old lines dropped from the
//! front) or edited by hand. The offset is trusted only when the file is at least that long,
//! its first line is unchanged, and the bytes just before the offset are unchanged (a
//! rotation that keeps a header line still moves every later byte). Otherwise the whole file
//! is read again, which is harmless: evidence is sets of days.
//!
//! Only complete lines are read: a last line without its newline waits for the next learn.

use crate::store::fnv1a;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest first line that is fingerprinted, in bytes.
const HEAD_MAX: u64 = 4096;
/// How many bytes before the offset are fingerprinted.
const TAIL_MAX: u64 = 256;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Cursor {
    /// Bytes of the history already read.
    offset: u64,
    /// The file's first line (at most [`HEAD_MAX`] bytes, within the read part).
    head: Span,
    /// The bytes just before `offset` (at most [`TAIL_MAX`]).
    tail: Span,
}

/// The FNV-1a hash of `len` bytes, in hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Span {
    len: u64,
    fnv1a: String,
}

/// Calls `see` with each complete line of `path` after `cursor` (each line of the file when
/// the cursor does not fit it) and returns the cursor after them; `None` when there is no
/// such file.
pub(super) fn read_new(
    path: &Path,
    cursor: Option<&Cursor>,
    mut see: impl FnMut(&str),
) -> std::io::Result<Option<Cursor>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let start = match cursor {
        Some(c) if c.fits(&mut file, len)? => {
            if c.offset == len {
                return Ok(Some(c.clone()));
            }
            c.offset
        }
        Some(c) => {
            tracing::debug!(path = %path.display(), offset = c.offset, "history rotated or rewritten; reading it again");
            0
        }
        None => 0,
    };
    file.seek(SeekFrom::Start(start))?;
    let mut reader = BufReader::new((&file).take(len - start));
    let mut offset = start;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        offset += n as u64;
        see(&String::from_utf8_lossy(&line));
    }
    drop(reader);
    Cursor::at(&mut file, offset).map(Some)
}

impl Cursor {
    /// The cursor after the first `offset` bytes of `file`, which end with a newline.
    fn at(file: &mut File, offset: u64) -> std::io::Result<Cursor> {
        let first = read_span(file, 0, offset.min(HEAD_MAX))?;
        let head = match first.iter().position(|b| *b == b'\n') {
            Some(i) => &first[..=i],
            None => &first[..],
        };
        let tail_len = offset.min(TAIL_MAX);
        let tail = read_span(file, offset - tail_len, tail_len)?;
        Ok(Cursor { offset, head: Span::of(head), tail: Span::of(&tail) })
    }

    /// Whether `file`, `len` bytes long, still holds what this cursor read.
    fn fits(&self, file: &mut File, len: u64) -> std::io::Result<bool> {
        if self.offset > len || self.head.len > self.offset || self.tail.len > self.offset {
            return Ok(false);
        }
        let head = read_span(file, 0, self.head.len)?;
        if Span::of(&head) != self.head {
            return Ok(false);
        }
        let tail = read_span(file, self.offset - self.tail.len, self.tail.len)?;
        Ok(Span::of(&tail) == self.tail)
    }
}

impl Span {
    fn of(bytes: &[u8]) -> Span {
        Span { len: bytes.len() as u64, fnv1a: format!("{:016x}", fnv1a(bytes)) }
    }
}

/// `len` bytes of `file` from `from`; fewer when the file ends first.
fn read_span(file: &mut File, from: u64, len: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(from))?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_after(path: &Path, cursor: Option<&Cursor>) -> (Vec<String>, Option<Cursor>) {
        let mut seen = Vec::new();
        let c = read_new(path, cursor, |l| seen.push(l.trim_end().to_owned())).unwrap();
        (seen, c)
    }

    #[test]
    fn reads_complete_lines_once_and_waits_for_an_unfinished_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        assert_eq!(lines_after(&path, None), (vec![], None));
        std::fs::write(&path, "one\ntwo\nthr").unwrap();
        let (seen, c) = lines_after(&path, None);
        assert_eq!(seen, ["one", "two"]);
        std::fs::write(&path, "one\ntwo\nthree\nfour\n").unwrap();
        let (seen, c) = lines_after(&path, c.as_ref());
        assert_eq!(seen, ["three", "four"]);
        let (seen, again) = lines_after(&path, c.as_ref());
        assert!(seen.is_empty());
        assert_eq!(again, c);
    }

    #[test]
    fn a_changed_head_or_tail_or_a_shorter_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.md");
        std::fs::write(&path, "# head\nb\nc\n").unwrap();
        let (_, c) = lines_after(&path, None);
        for rewritten in ["# HEAD\nb\nc\nd\n", "# head\nB\nc\nd\n", "# head\n"] {
            std::fs::write(&path, rewritten).unwrap();
            let (seen, _) = lines_after(&path, c.as_ref());
            assert_eq!(seen.first().map(String::as_str), Some(&rewritten[..6]), "{rewritten:?}");
        }
    }
}
