//! Reading state for a command that only reads (`raven policy explain`, `raven outbox`): the
//! file is never moved, copied, locked or written. A file that does not parse, or a section of
//! the wrong shape, reads as the section's default with a note that says so; keeping the file
//! aside stays the job of a writer (the supervisor), as before.

use super::{JsonStateStore, StoreError};
use serde::de::DeserializeOwned;
use serde_json::Value;

impl JsonStateStore {
    /// One section as it is on disk (its default when absent), and a note when the file or
    /// the section cannot be read. Nothing is written.
    pub fn peek<T: DeserializeOwned + Default>(&self, section: &str) -> Result<(T, Option<String>), StoreError> {
        if let Some(rows) = &self.rows {
            return self.peek_row(rows, section);
        }
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((T::default(), None)),
            Err(e) => return Err(self.io(e)),
        };
        let root = match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Ok((T::default(), Some(self.corrupt("is not a JSON object")))),
            Err(e) => return Ok((T::default(), Some(self.corrupt(&e.to_string())))),
        };
        let Some(value) = root.get(section) else { return Ok((T::default(), None)) };
        match T::deserialize(value) {
            Ok(t) => Ok((t, None)),
            Err(e) => Ok((T::default(), Some(self.corrupt(&format!("section `{section}` is unreadable: {e}"))))),
        }
    }

    fn corrupt(&self, why: &str) -> String {
        format!(
            "state file {} is corrupt ({why}); shown as empty and left as it is (the supervisor keeps a copy aside when it next writes it)",
            self.path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_file_or_section_is_reported_and_left_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let store = JsonStateStore::new(&path);
        for bytes in [&b"{\"a\": [tru"[..], b"[1]", b"{\"a\": \"not a number\"}"] {
            std::fs::write(&path, bytes).unwrap();
            let (value, note) = store.peek::<u32>("a").unwrap();
            assert_eq!(value, 0);
            assert!(note.is_some_and(|n| n.contains("corrupt")));
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
            assert_eq!(left, ["state.json"], "nothing kept aside, no lock made");
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        }
        std::fs::write(&path, b"{\"a\": 7}").unwrap();
        assert_eq!(store.peek::<u32>("a").unwrap(), (7, None));
    }
}
