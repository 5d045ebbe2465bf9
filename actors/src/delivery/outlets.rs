//! Channel outlets: where the DeliveryHub hands a message over. Failures are results.

use crate::store::{lock_path_for, FileLock};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

pub use super::webhook::{WebhookOutlet, SECRET_HEADER};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutletError {
    /// Worth retrying later (outlet down, 5xx, timeout).
    #[error("{0}")]
    Transient(String),
    /// Retrying will not help (4xx, a refused message).
    #[error("refused: {0}")]
    Refused(String),
}

pub trait Outlet: Send + Sync {
    /// The channel it serves (`cli`, `jsonl`, `webhook`, …).
    fn channel(&self) -> &str;
    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>>;
    /// Whether someone can see what it delivers now (a terminal no one watches cannot be
    /// ignored). A real channel reaches a person: yes.
    fn seen(&self) -> bool {
        true
    }
}

/// The interactive terminal: proactive messages get a marker. It writes to a terminal (the
/// process's own stdout), publishes to the attached REPLs (the supervisor's event bus), or
/// both.
pub struct CliOutlet {
    out: Option<Mutex<Box<dyn Write + Send>>>,
    bus: Option<crate::ipc::EventBus>,
    /// `out` is a terminal someone may be looking at.
    terminal: bool,
}

impl CliOutlet {
    pub fn stdout() -> Self {
        use std::io::IsTerminal;
        let terminal = std::io::stdout().is_terminal();
        CliOutlet { out: Some(Mutex::new(Box::new(std::io::stdout()))), bus: None, terminal }
    }

    /// To `w`, which its caller shows someone: what it writes counts as seen.
    #[cfg(test)]
    pub fn to_writer(w: Box<dyn Write + Send>) -> Self {
        CliOutlet { out: Some(Mutex::new(w)), bus: None, terminal: true }
    }

    /// Only to the subscribers of `bus` (an embedded REPL prints them between prompts).
    pub fn events_only(bus: crate::ipc::EventBus) -> Self {
        CliOutlet { out: None, bus: Some(bus), terminal: false }
    }

    pub fn publishing(mut self, bus: crate::ipc::EventBus) -> Self {
        self.bus = Some(bus);
        self
    }

    /// A proactive message gets the marker and, when it has one, its short id (what
    /// `raven feedback` takes). Escape sequences are taken out: this goes to a terminal.
    pub fn render(text: &OutboundText) -> String {
        let content = crate::text::plain_emphasis(&crate::text::sanitize(&text.content));
        match (text.is_proactive(), text.extras.get(raven_proto::NUDGE_ID)) {
            (true, Some(id)) => format!("[raven ⏰ {}] {content}", crate::feedback::short_id(id)),
            (true, None) => format!("[raven ⏰] {content}"),
            (false, _) => content,
        }
    }
}

impl Outlet for CliOutlet {
    fn channel(&self) -> &str {
        "cli"
    }

    /// A REPL is attached, or stdout is a terminal.
    fn seen(&self) -> bool {
        self.terminal || self.bus.as_ref().is_some_and(|b| b.subscribers() > 0)
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        let line = CliOutlet::render(text);
        if let Some(bus) = &self.bus {
            bus.publish(&line);
        }
        let r = match &self.out {
            None => Ok(()),
            Some(out) => {
                out.lock().map_err(|_| OutletError::Transient("terminal writer poisoned".into())).and_then(|mut w| {
                    writeln!(w, "{line}").and_then(|_| w.flush()).map_err(|e| OutletError::Transient(e.to_string()))
                })
            }
        };
        Box::pin(async move { r })
    }
}

/// Appends one JSON line per message to a file: for tests and scripting. It is also a
/// receiver that honours delivery ids: a redelivered id is not written twice.
pub struct JsonlOutlet {
    path: PathBuf,
    seen: Mutex<Seen>,
}

/// The ids in the file, read up to `read_to` (lines a peer process appended since are read
/// on the next append: only the new bytes, so a file that runs for weeks costs no more per
/// message). A file that shrank or was replaced is read again from its start.
#[derive(Default)]
struct Seen {
    ids: RecentIds,
    read_to: u64,
    file_id: u64,
}

/// The delivery ids most recently written, at most [`RecentIds::KEPT`]: a redelivery comes
/// within hours (an outbox retry, a fire repeated after a crash), so a file that runs for
/// years does not keep every id it ever saw in memory.
#[derive(Default)]
struct RecentIds {
    set: HashSet<String>,
    order: std::collections::VecDeque<String>,
}

impl RecentIds {
    const KEPT: usize = 50_000;

    fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    fn insert(&mut self, id: String) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
        }
        while self.order.len() > Self::KEPT {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

impl Seen {
    /// Reads what was appended to `f` since the last call.
    fn catch_up(&mut self, f: &mut std::fs::File) -> std::io::Result<()> {
        use std::io::{Read, Seek};
        let meta = f.metadata()?;
        #[cfg(unix)]
        let file_id = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let file_id = 0;
        if file_id != self.file_id || meta.len() < self.read_to {
            *self = Seen { file_id, ..Seen::default() };
        }
        if meta.len() == self.read_to {
            return Ok(());
        }
        let mut new = Vec::new();
        f.seek(std::io::SeekFrom::Start(self.read_to))?;
        f.take(meta.len() - self.read_to).read_to_end(&mut new)?;
        // Whole lines only: a line still being written is read once it is complete.
        let whole = new.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        for line in new[..whole].split(|b| *b == b'\n') {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
                if let Some(id) = v.get("delivery_id").and_then(|i| i.as_str()) {
                    self.ids.insert(id.to_owned());
                }
            }
        }
        self.read_to += whole as u64;
        Ok(())
    }
}

impl JsonlOutlet {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        JsonlOutlet { path: path.into(), seen: Mutex::default() }
    }

    fn append(&self, text: &OutboundText) -> std::io::Result<()> {
        let _lock = FileLock::exclusive(&lock_path_for(&self.path))?;
        let mut seen = self.seen.lock().map_err(|_| std::io::Error::other("poisoned"))?;
        let mut f = std::fs::OpenOptions::new().create(true).read(true).append(true).open(&self.path)?;
        // Under the lock: a peer process may have appended.
        seen.catch_up(&mut f)?;
        if seen.ids.contains(&text.delivery_id) {
            return Ok(());
        }
        let mut line = serde_json::to_vec(&serde_json::json!({
            "delivery_id": text.delivery_id,
            "channel": text.channel,
            "chat_id": text.chat_id,
            "content": text.content,
            "proactive": text.is_proactive(),
        }))?;
        line.push(b'\n');
        crate::store::files::append_whole(&mut f, &line)?;
        f.sync_data()?;
        // Read back on the next append rather than assumed: it costs one line.
        seen.ids.insert(text.delivery_id.clone());
        Ok(())
    }
}

impl Outlet for JsonlOutlet {
    fn channel(&self) -> &str {
        "jsonl"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        let r = self.append(text).map_err(|e| OutletError::Transient(format!("{}: {e}", self.path.display())));
        Box::pin(async move { r })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(path: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["delivery_id"].as_str().unwrap().to_owned())
            .collect()
    }

    fn text(id: &str) -> OutboundText {
        OutboundText::proactive(id, "jsonl", "me", format!("message {id}"))
    }

    #[test]
    fn the_ids_kept_in_memory_are_bounded_and_the_recent_ones_stay() {
        let mut ids = RecentIds::default();
        for i in 0..RecentIds::KEPT + 10 {
            ids.insert(format!("id-{i}"));
        }
        ids.insert(format!("id-{}", RecentIds::KEPT + 9));
        assert_eq!((ids.set.len(), ids.order.len()), (RecentIds::KEPT, RecentIds::KEPT));
        assert!(!ids.contains("id-0") && ids.contains(&format!("id-{}", RecentIds::KEPT + 9)));
    }

    /// Delivery ids are honoured across processes (a peer's appends are read), and a file
    /// that was emptied or replaced is read anew rather than from where the last read ended.
    #[actix_rt::test]
    async fn the_jsonl_outlet_writes_each_id_once_whoever_appended_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let (mine, peer) = (JsonlOutlet::new(&path), JsonlOutlet::new(&path));
        mine.deliver(&text("a")).await.unwrap();
        mine.deliver(&text("a")).await.unwrap();
        peer.deliver(&text("b")).await.unwrap();
        mine.deliver(&text("b")).await.unwrap();
        peer.deliver(&text("a")).await.unwrap();
        assert_eq!(ids(&path), ["a", "b"]);
        // The user clears the file: what it held may be written again.
        std::fs::write(&path, "").unwrap();
        mine.deliver(&text("c")).await.unwrap();
        mine.deliver(&text("a")).await.unwrap();
        // Replaced by a different file of the same length or longer: read from its start.
        let other = std::fs::read_to_string(&path).unwrap().replace("\"c\"", "\"z\"");
        std::fs::write(dir.path().join("new"), other).unwrap();
        std::fs::rename(dir.path().join("new"), &path).unwrap();
        mine.deliver(&text("c")).await.unwrap();
        mine.deliver(&text("z")).await.unwrap();
        assert_eq!(ids(&path), ["z", "a", "c"]);
    }
}
