//! A [`JsonStateStore`] whose sections are rows of the state database (see [`sections`]):
//! the same rules as on a file, each read one snapshot and each update one transaction.
//!
//! A section of the wrong shape is read as its default, and its text is kept aside once per
//! content beside the database (`state.db.<owner>.<section>.corrupt-<hash>.json`), reported,
//! and replaced by the next update.

use super::sections::Rows;
use super::{fnv1a, unchanged, JsonStateStore, Stamp, StoreError, MAX_STATE_BYTES};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use std::path::PathBuf;

impl JsonStateStore {
    pub(super) fn rows_stamp(&self, rows: &Rows) -> Option<Stamp> {
        match rows.revision() {
            Ok(rev) => rev.map(Stamp::of_revision),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }

    pub(super) fn read_row<T: DeserializeOwned + Default>(
        &self,
        rows: &Rows,
        section: &str,
    ) -> Result<(T, Option<Stamp>), StoreError> {
        let (text, rev) = rows.read(section)?;
        let value = text.and_then(|t| self.decoded_row(rows, section, &t).map(|(v, _)| v)).unwrap_or_default();
        Ok((value, rev.map(Stamp::of_revision)))
    }

    pub(super) fn update_row<T, R>(
        &self,
        rows: &Rows,
        section: &str,
        f: impl FnOnce(&mut T) -> R,
    ) -> Result<R, StoreError>
    where
        T: Serialize + DeserializeOwned + Default,
    {
        rows.transact(section, |text| {
            let decoded = text.as_deref().and_then(|t| self.decoded_row::<T>(rows, section, t));
            // What to carry over: the section as read, unless it was of the wrong shape.
            let (mut value, read) = match decoded {
                Some((v, read)) => (v, Some(read)),
                None => (T::default(), None),
            };
            let out = f(&mut value);
            let encoded = self.encode(section, &value, read.as_ref())?;
            // Nothing changed (an absent section reads as its default): nothing is written.
            let kept = match (&text, read) {
                (None, _) => None,
                (Some(_), Some(read)) => Some(read),
                (Some(t), None) => Some(serde_json::from_str(t).unwrap_or(Value::Null)),
            };
            if unchanged::<T>(kept.as_ref(), &encoded) {
                return Ok((None, out));
            }
            let text = encoded.to_string();
            if text.len() > MAX_STATE_BYTES {
                return Err(StoreError::TooLarge {
                    path: self.path.clone(),
                    section: section.to_owned(),
                    bytes: text.len(),
                });
            }
            Ok((Some(text), out))
        })
    }

    /// One section as stored, and a note when it cannot be read; nothing is written or kept
    /// aside (a command that only reads).
    pub(super) fn peek_row<T: DeserializeOwned + Default>(
        &self,
        rows: &Rows,
        section: &str,
    ) -> Result<(T, Option<String>), StoreError> {
        let text = match rows.read(section) {
            Ok((text, _)) => text,
            Err(StoreError::Db(e)) => match super::db::corrupt_note(&e) {
                Some(note) => return Ok((T::default(), Some(note))),
                None => return Err(e.into()),
            },
            Err(e) => return Err(e),
        };
        let Some(text) = text else { return Ok((T::default(), None)) };
        match serde_json::from_str::<T>(&text) {
            Ok(v) => Ok((v, None)),
            Err(e) => Ok((
                T::default(),
                Some(format!(
                    "state database {}: {} section `{section}` is unreadable ({e}); shown as empty and left as it is",
                    self.path.display(),
                    rows.owner()
                )),
            )),
        }
    }

    /// A section's text decoded, with its JSON as read; `None` when it is not of its type (its
    /// text kept aside once per content, and reported).
    fn decoded_row<T: DeserializeOwned>(&self, rows: &Rows, section: &str, text: &str) -> Option<(T, Value)> {
        let parsed = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
        let decoded = parsed.and_then(|v| T::deserialize(&v).map(|t| (t, v)).map_err(|e| e.to_string()));
        match decoded {
            Ok(ok) => Some(ok),
            Err(e) => {
                let kept = self.row_aside(rows, section, text);
                match kept {
                    Ok(None) => {}
                    Ok(Some(kept)) => self.notice(format!(
                        "state database {}: {} section `{section}` is unreadable ({e}); kept a copy as {} and reset that section",
                        self.path.display(),
                        rows.owner(),
                        kept.display()
                    )),
                    Err(err) => self.notice(format!(
                        "state database {}: {} section `{section}` is unreadable ({e}); the copy failed ({err}); reset that section",
                        self.path.display(),
                        rows.owner()
                    )),
                }
                None
            }
        }
    }

    /// Writes an unreadable section's text beside the database, once per content: the new
    /// file's path, or `None` when this content was kept before.
    fn row_aside(&self, rows: &Rows, section: &str, text: &str) -> std::io::Result<Option<PathBuf>> {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let kept = self.path.with_file_name(format!(
            "{name}.{}.{section}.corrupt-{:016x}.json",
            rows.owner(),
            fnv1a(text.as_bytes())
        ));
        if kept.exists() {
            return Ok(None);
        }
        super::write_atomic_private(&kept, text.as_bytes())?;
        Ok(Some(kept))
    }
}
