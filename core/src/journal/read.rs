//! Reading the journal back: everything kept (the rotated file, then the current one), and
//! the lines appended since the last look (for `raven log --follow`).

use crate::store::files::read_optional;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where a full journal is moved: `journal.jsonl.1`.
pub fn rotated(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".1");
    path.with_file_name(name)
}

/// Every kept line, oldest first (blank lines dropped); `None` when there is no journal.
pub fn read_all(path: &Path) -> std::io::Result<Option<Vec<String>>> {
    let (old, new) = (read_optional(&rotated(path))?, read_optional(path)?);
    if old.is_none() && new.is_none() {
        return Ok(None);
    }
    let lines = old.iter().chain(new.iter()).flat_map(|t| t.lines()).filter(|l| !l.trim().is_empty());
    Ok(Some(lines.map(str::to_owned).collect()))
}

/// Follows the journal from where it ends now: each [`JournalReader::poll`] gives the whole
/// lines appended since. A rotation (the file replaced by a shorter one) starts over at the
/// new file's beginning.
#[derive(Debug)]
pub struct JournalReader {
    path: PathBuf,
    offset: u64,
    identity: Option<u64>,
    partial: Vec<u8>,
}

impl JournalReader {
    /// Starts at the current end of the file (its start when there is none yet).
    pub fn from_end(path: impl Into<PathBuf>) -> JournalReader {
        let path = path.into();
        let meta = std::fs::metadata(&path).ok();
        let offset = meta.as_ref().map_or(0, |m| m.len());
        let identity = meta.as_ref().map(identity_of);
        JournalReader { path, offset, identity, partial: Vec::new() }
    }

    /// The whole lines appended since the last poll.
    pub fn poll(&mut self) -> std::io::Result<Vec<String>> {
        let mut f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let meta = f.metadata()?;
        if Some(identity_of(&meta)) != self.identity || meta.len() < self.offset {
            (self.offset, self.identity) = (0, Some(identity_of(&meta)));
            self.partial.clear();
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        Ok(self.take_lines())
    }

    fn take_lines(&mut self) -> Vec<String> {
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else { return Vec::new() };
        let rest = self.partial.split_off(end + 1);
        let whole = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&whole).lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect()
    }
}

#[cfg(unix)]
fn identity_of(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(m)
}

#[cfg(not(unix))]
fn identity_of(_: &std::fs::Metadata) -> u64 {
    0
}
