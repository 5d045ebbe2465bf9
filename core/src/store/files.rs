//! The two plain reads every reader of the data dir needs: a whole file that may be missing,
//! and the end of a file from its first whole line. Bytes that are not UTF-8 are replaced
//! (one bad byte spoils its line, not the file). And the one append every log uses: whole
//! lines, on a line of their own, written whole or not at all.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Opens `path` for [`append_whole`] (created when missing).
pub fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).read(true).append(true).open(path)
}

/// Appends `lines` (whole lines, each ending in `\n`) in one write, after a `\n` when the
/// file does not end with one (a line torn by a crash, a hand edit), so they stand alone. A
/// write that fails part way (a full disk, a file-size limit) is undone: the file is cut back
/// to its length before, so no torn line is left. Callers that share the file across
/// processes hold its lock, so the cut never reaches a peer's line.
pub fn append_whole(f: &mut std::fs::File, lines: &[u8]) -> std::io::Result<()> {
    let before = f.metadata()?.len();
    let mut bytes = Vec::with_capacity(lines.len() + 1);
    if before > 0 && last_byte(f, before)? != b'\n' {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(lines);
    if let Err(e) = f.write_all(&bytes) {
        if let Err(undo) = f.set_len(before) {
            tracing::warn!("a failed append could not be undone, a torn line is left: {undo}");
        }
        return Err(e);
    }
    Ok(())
}

fn last_byte(f: &mut std::fs::File, len: u64) -> std::io::Result<u8> {
    let mut last = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    Ok(last[0])
}

/// The file's text; `None` when there is no file.
pub fn read_optional(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(text(bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The last `max` bytes of the file, from the first whole line in them (a cut line, and a
/// cut character, is dropped, not misread); `None` when there is no file.
pub fn tail(path: &Path, max: u64) -> std::io::Result<Option<String>> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    f.read_to_end(&mut bytes)?;
    let all = text(bytes);
    Ok(Some(match (start > 0, all.find('\n')) {
        (true, Some(i)) => all[i + 1..].to_owned(),
        (true, None) => String::new(),
        (false, _) => all,
    }))
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_starts_at_a_whole_line_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        assert_eq!(tail(&p, 10).unwrap(), None);
        assert_eq!(read_optional(&p).unwrap(), None);
        std::fs::write(&p, b"first line\nsecond\nthird\n").unwrap();
        assert_eq!(tail(&p, 12).unwrap().unwrap(), "third\n");
        assert_eq!(tail(&p, 100).unwrap().unwrap(), "first line\nsecond\nthird\n");
        std::fs::write(&p, b"ok\n\xff bad\n").unwrap();
        assert_eq!(read_optional(&p).unwrap().unwrap(), "ok\n\u{fffd} bad\n");
    }

    #[test]
    fn an_append_starts_on_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.jsonl");
        std::fs::write(&p, b"{\"torn\"").unwrap();
        append_whole(&mut open_append(&p).unwrap(), b"{\"a\":1}\n").unwrap();
        append_whole(&mut open_append(&p).unwrap(), b"{\"b\":2}\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"torn\"\n{\"a\":1}\n{\"b\":2}\n");
    }
}
