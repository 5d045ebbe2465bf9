//! Channel outlets: where the DeliveryHub hands a message over. Failures are results.

use crate::store::{lock_path_for, FileLock};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

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
}

/// The interactive terminal: proactive messages get a marker. It writes to a terminal (the
/// process's own stdout), publishes to the attached REPLs (the supervisor's event bus), or
/// both.
pub struct CliOutlet {
    out: Option<Mutex<Box<dyn Write + Send>>>,
    bus: Option<crate::ipc::EventBus>,
}

impl CliOutlet {
    pub fn stdout() -> Self {
        CliOutlet::to_writer(Box::new(std::io::stdout()))
    }

    pub fn to_writer(w: Box<dyn Write + Send>) -> Self {
        CliOutlet { out: Some(Mutex::new(w)), bus: None }
    }

    /// Only to the subscribers of `bus` (an embedded REPL prints them between prompts).
    pub fn events_only(bus: crate::ipc::EventBus) -> Self {
        CliOutlet { out: None, bus: Some(bus) }
    }

    pub fn publishing(mut self, bus: crate::ipc::EventBus) -> Self {
        self.bus = Some(bus);
        self
    }

    pub fn render(text: &OutboundText) -> String {
        if text.is_proactive() {
            format!("[raven ⏰] {}", text.content)
        } else {
            text.content.clone()
        }
    }
}

impl Outlet for CliOutlet {
    fn channel(&self) -> &str {
        "cli"
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
    seen: Mutex<Option<HashSet<String>>>,
}

impl JsonlOutlet {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        JsonlOutlet { path: path.into(), seen: Mutex::new(None) }
    }

    fn append(&self, text: &OutboundText) -> std::io::Result<()> {
        let _lock = FileLock::exclusive(&lock_path_for(&self.path))?;
        let mut seen = self.seen.lock().map_err(|_| std::io::Error::other("poisoned"))?;
        // Read the ids on disk under the lock: a peer process may have appended.
        let ids = seen.get_or_insert_with(HashSet::new);
        if let Ok(existing) = std::fs::read_to_string(&self.path) {
            for line in existing.lines() {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                    if let Some(id) = v.get("delivery_id").and_then(|i| i.as_str()) {
                        ids.insert(id.to_owned());
                    }
                }
            }
        }
        if ids.contains(&text.delivery_id) {
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
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?;
        f.write_all(&line)?;
        f.sync_data()?;
        ids.insert(text.delivery_id.clone());
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

/// POSTs a JSON body to a configured URL with a shared-secret header; retries transient
/// failures with exponential backoff, then gives up with an error (the hub keeps the message).
pub struct WebhookOutlet {
    client: reqwest::Client,
    url: String,
    secret: Option<String>,
    attempts: u32,
    backoff: Duration,
}

pub const SECRET_HEADER: &str = "x-raven-secret";

impl WebhookOutlet {
    pub fn new(
        url: &str,
        secret: Option<String>,
        attempts: u32,
        backoff: Duration,
        timeout: Duration,
    ) -> Result<Self, String> {
        let client = reqwest::Client::builder().timeout(timeout).build().map_err(|e| e.to_string())?;
        Ok(WebhookOutlet { client, url: url.to_owned(), secret, attempts: attempts.max(1), backoff })
    }

    async fn post(&self, text: &OutboundText) -> Result<(), OutletError> {
        let body = serde_json::json!({
            "delivery_id": text.delivery_id,
            "channel": text.channel,
            "chat_id": text.chat_id,
            "content": text.content,
            "proactive": text.is_proactive(),
        });
        let mut last = OutletError::Transient("not attempted".into());
        for attempt in 0..self.attempts {
            if attempt > 0 {
                actix_rt::time::sleep(self.backoff * 2u32.pow(attempt - 1)).await;
            }
            let mut req = self.client.post(&self.url).json(&body);
            if let Some(s) = &self.secret {
                req = req.header(SECRET_HEADER, s);
            }
            match req.send().await {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if r.status().is_client_error() && r.status().as_u16() != 429 => {
                    return Err(OutletError::Refused(format!("HTTP {}", r.status().as_u16())))
                }
                Ok(r) => last = OutletError::Transient(format!("HTTP {}", r.status().as_u16())),
                Err(e) => last = OutletError::Transient(e.to_string()),
            }
        }
        Err(last)
    }
}

impl Outlet for WebhookOutlet {
    fn channel(&self) -> &str {
        "webhook"
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        Box::pin(self.post(text))
    }
}
