//! Fields of a section that its typed struct does not know (a newer version's, the user's
//! own): an update decodes the section into its struct and encodes the struct back, which
//! would drop them, so the store carries them over from the section as read.
//!
//! The rule, in the store for every section: when the section's type is a struct with named
//! fields and the section as read and as written are both JSON objects, every member of the
//! old object whose key is none of the struct's field names (or aliases), and which the new
//! object lacks, is put back as it was. A known field the struct leaves out when empty is
//! not brought back: its key is known. Only the section's own members are carried over; a
//! field unknown to a nested struct (in a list's entry) is not, since old and new entries
//! have nothing to be matched by. A section of another type (a map, a list, a single value)
//! keeps every key it reads anyway, or has none; so does a struct with a flattened field.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

/// Puts back into `written` the members of `read` that `T` does not know (see the module's
/// rule). `read` is the section as it was on disk, `None` when there is nothing to keep.
pub(super) fn carry_over<T: DeserializeOwned>(read: Option<&Value>, written: &mut Value) {
    let (Some(Value::Object(read)), Value::Object(written)) = (read, written) else {
        return;
    };
    let Some(known) = known_fields::<T>() else {
        return;
    };
    for (key, value) in read {
        if !known.contains(&key.as_str()) && !written.contains_key(key) {
            written.insert(key.clone(), value.clone());
        }
    }
}

/// The keys a derived `Deserialize` of `T` accepts (field names and aliases) when `T` is a
/// struct with named fields; `None` for any other type.
fn known_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    match T::deserialize(Probe) {
        Err(Stop(fields)) => fields,
        Ok(_) => None,
    }
}

/// A deserializer that asks the type what it is and stops there.
struct Probe;

/// The end of a probe: a struct's field names, or `None` for any other type.
#[derive(Debug)]
struct Stop(Option<&'static [&'static str]>);

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probed")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop(None)
    }
}

impl<'de> Deserializer<'de> for Probe {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        Err(Stop(Some(fields)))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::JsonStateStore;
    use serde::{Deserialize, Serialize};
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, Default, Serialize, Deserialize)]
    #[serde(default)]
    struct Section {
        n: u64,
        #[serde(alias = "old_name", skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    }

    fn file(store: &JsonStateStore) -> Value {
        serde_json::from_slice(&std::fs::read(store.path()).unwrap()).unwrap()
    }

    #[test]
    fn a_struct_knows_its_fields_and_aliases_other_types_none() {
        let mut known = known_fields::<Section>().unwrap().to_vec();
        known.sort_unstable();
        assert_eq!(known, ["n", "note", "old_name"]);
        assert_eq!(known_fields::<BTreeMap<String, u64>>(), None);
        assert_eq!(known_fields::<Vec<Section>>(), None);
        assert_eq!(known_fields::<Option<Section>>(), None);
    }

    #[test]
    fn an_unknown_field_of_a_section_survives_an_update_of_that_section() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonStateStore::new(dir.path().join("state.json"));
        let text = r#"{"a": {"n": 1, "mine": {"keep": [1, 2]}}, "b": {"other": true}}"#;
        std::fs::write(store.path(), text).unwrap();
        store.update("a", |s: &mut Section| s.n = 2).unwrap();
        assert_eq!(file(&store), json!({"a": {"n": 2, "mine": {"keep": [1, 2]}}, "b": {"other": true}}));
    }

    #[test]
    fn a_known_field_left_out_when_empty_is_not_brought_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonStateStore::new(dir.path().join("state.json"));
        std::fs::write(store.path(), r#"{"a": {"n": 1, "old_name": "x", "mine": 3}}"#).unwrap();
        store.update("a", |s: &mut Section| s.note = None).unwrap();
        assert_eq!(file(&store), json!({"a": {"n": 1, "mine": 3}}));
    }

    #[test]
    fn a_section_of_the_wrong_shape_carries_nothing_over() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonStateStore::new(dir.path().join("state.json"));
        std::fs::write(store.path(), r#"{"a": {"n": "seven", "mine": 3}}"#).unwrap();
        store.update("a", |s: &mut Section| s.n = 1).unwrap();
        assert_eq!(file(&store), json!({"a": {"n": 1}}), "the old section was kept aside, not mixed in");
    }
}
