//! The two plain reads every reader of the data dir needs: a whole file that may be missing,
//! and the end of a file from its first whole line. Bytes that are not UTF-8 are replaced
//! (one bad byte spoils its line, not the file).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

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
}
