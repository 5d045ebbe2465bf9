//! A `getUpdates` batch read update by update, so one update the JSON parser refuses (a lone
//! surrogate in a stranger's text, say) spoils only itself: it is skipped by its `update_id`
//! and the offset moves past it. A batch whose envelope cannot be read at all is read again
//! with its invalid UTF-8 replaced; failing that, its `update_id`s are found by a lenient scan
//! of the bytes. [`Stuck`] counts what keeps failing, so nothing is asked for again for ever.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// How often the supervisor may fail to take one update before it is skipped (the supervisor
/// restarting is back within a second or two; the listener pauses a second between tries).
pub(super) const INBOX_TRIES: u32 = 10;

/// How many unreadable batches in a row (the later ones asked one update at a time) before
/// the update they hold is skipped.
pub(super) const UNREADABLE_TRIES: u32 = 4;

/// One update of a batch, as read.
#[derive(Debug, PartialEq)]
pub(super) enum Update {
    Read {
        id: i64,
        update: Value,
    },
    /// Not JSON the parser takes; its id was still found.
    Unreadable {
        id: i64,
        why: String,
    },
}

impl Update {
    pub(super) fn id(&self) -> i64 {
        match self {
            Update::Read { id, .. } | Update::Unreadable { id, .. } => *id,
        }
    }
}

/// What a batch held.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Batch {
    pub updates: Vec<Update>,
    /// Values in it without even an `update_id` to read.
    pub nameless: usize,
}

/// Each raw update of a batch read on its own.
pub(super) fn read(raw: Vec<Box<RawValue>>) -> Batch {
    let mut batch = Batch::default();
    for value in raw {
        match (serde_json::from_str::<Value>(value.get()), id_of(value.get())) {
            (Ok(update), Some(id)) => batch.updates.push(Update::Read { id, update }),
            (Err(e), Some(id)) => batch.updates.push(Update::Unreadable { id, why: e.to_string() }),
            (_, None) => batch.nameless += 1,
        }
    }
    batch
}

/// A batch whose envelope did not parse, read again with its invalid UTF-8 replaced.
pub(super) fn read_lossy(body: &[u8]) -> Option<Batch> {
    #[derive(Deserialize)]
    struct Envelope {
        ok: bool,
        #[serde(default)]
        result: Vec<Box<RawValue>>,
    }
    let text = String::from_utf8_lossy(body);
    let envelope: Envelope = serde_json::from_str(&text).ok()?;
    envelope.ok.then(|| read(envelope.result))
}

/// The `update_id` of one update, read without parsing the rest (which may be unreadable).
fn id_of(raw: &str) -> Option<i64> {
    #[derive(Deserialize)]
    struct Id {
        update_id: i64,
    }
    serde_json::from_str::<Id>(raw).ok().map(|i| i.update_id)
}

/// Every `"update_id": <n>` in `body`, in order: a key, since a quote inside a JSON string is
/// escaped (`\"update_id\"` does not match).
pub(super) fn scan_ids(body: &[u8]) -> Vec<i64> {
    const KEY: &[u8] = b"\"update_id\"";
    let mut ids = Vec::new();
    for at in memchr::memmem::find_iter(body, KEY) {
        let rest = &body[at + KEY.len()..];
        let rest = skip_space(rest);
        let Some(rest) = rest.strip_prefix(b":") else { continue };
        let rest = skip_space(rest);
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if let Some(id) = std::str::from_utf8(&rest[..digits]).ok().and_then(|d| d.parse().ok()) {
            ids.push(id);
        }
    }
    ids
}

fn skip_space(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// What keeps failing, in memory (a restart starts the counts anew).
#[derive(Debug, Default)]
pub(super) struct Stuck {
    /// The update the supervisor did not take, and how often it did not.
    inbox: Option<(i64, u32)>,
    /// Batches in a row that could not be read.
    unreadable: u32,
}

impl Stuck {
    /// The supervisor did not take update `id` once more: whether to give up on it.
    pub(super) fn inbox_failed(&mut self, id: i64) -> bool {
        let tries = match self.inbox {
            Some((stuck, n)) if stuck == id => n + 1,
            _ => 1,
        };
        self.inbox = (tries < INBOX_TRIES).then_some((id, tries));
        tries >= INBOX_TRIES
    }

    /// An update was handed over (or given up on).
    pub(super) fn handed(&mut self) {
        self.inbox = None;
    }

    /// Whether the next poll asks for one update only, to tell the unreadable one apart.
    pub(super) fn one_at_a_time(&self) -> bool {
        self.unreadable > 0
    }

    /// One more batch could not be read: whether to skip the update it holds.
    pub(super) fn batch_unreadable(&mut self) -> bool {
        self.unreadable += 1;
        self.unreadable >= UNREADABLE_TRIES
    }

    /// A batch was read (or its update skipped).
    pub(super) fn batch_read(&mut self) {
        self.unreadable = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(batch: &str) -> Vec<Box<RawValue>> {
        #[derive(Deserialize)]
        struct Envelope {
            result: Vec<Box<RawValue>>,
        }
        serde_json::from_str::<Envelope>(batch).unwrap().result
    }

    #[test]
    fn an_update_the_parser_refuses_spoils_only_itself() {
        let body = r#"{"ok":true,"result":[
            {"update_id":100,"message":{"text":"hi \ud800 from a stranger"}},
            {"update_id":101,"message":{"text":"/remind in 30m"}},
            {"message":{"text":"no id"}}]}"#;
        assert!(serde_json::from_str::<Value>(body).is_err(), "the whole batch is unreadable as one value");
        let batch = read(raw(body));
        assert!(matches!(batch.updates[0], Update::Unreadable { id: 100, .. }), "{batch:?}");
        assert!(
            matches!(&batch.updates[1], Update::Read { id: 101, update } if update["message"]["text"] == "/remind in 30m")
        );
        assert_eq!((batch.updates.len(), batch.nameless), (2, 1));
    }

    #[test]
    fn invalid_utf8_is_read_as_replacement_characters() {
        let mut body = br#"{"ok":true,"result":[{"update_id":7,"message":{"text":"a"#.to_vec();
        body.extend_from_slice(&[0xff, 0xfe]);
        body.extend_from_slice(br#""}}]}"#);
        let batch = read_lossy(&body).expect("readable once mended");
        assert!(
            matches!(&batch.updates[0], Update::Read { id: 7, update } if update["message"]["text"] == "a\u{fffd}\u{fffd}")
        );
        assert_eq!(read_lossy(b"<html>portal</html>"), None);
    }

    #[test]
    fn a_scan_finds_the_ids_of_a_broken_batch_and_not_those_quoted_in_a_text() {
        let body =
            br#"{"ok":true,"result":[{"update_id" : 41,"message":{"text":"\"update_id\": 999"}},{"update_id":42,"mess"#;
        assert_eq!(scan_ids(body), [41, 42]);
        assert_eq!(scan_ids(b"<html>Please log in</html>"), Vec::<i64>::new());
    }

    #[test]
    fn an_update_the_supervisor_keeps_refusing_is_given_up_after_a_few_tries() {
        let mut s = Stuck::default();
        assert!((1..INBOX_TRIES).all(|_| !s.inbox_failed(100)));
        assert!(s.inbox_failed(100), "given up on at the last try");
        assert!(!s.inbox_failed(100), "counted anew");
        assert!(!s.inbox_failed(101), "another update starts its own count");
        s.handed();
        assert!((1..INBOX_TRIES).all(|_| !s.inbox_failed(101)));
    }
}
