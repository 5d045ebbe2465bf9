//! Test doubles shared by the unit tests.

use crate::llm::provider::{CompletionRequest, Provider, ProviderError, ProviderReply};
use crate::supervise::LocalBoxFuture;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Answers every call with a `planner_decision` call of `reply` (or its error), counting.
#[derive(Clone, Default)]
pub struct Scripted {
    pub calls: Rc<Cell<u32>>,
    pub reply: Rc<RefCell<Option<Result<Value, ProviderError>>>>,
    /// The names of the tools each request offered, in order.
    pub offered: Rc<RefCell<Vec<Vec<String>>>>,
}

impl Scripted {
    pub fn answering(args: Value) -> Scripted {
        let s = Scripted::default();
        s.set(Ok(args));
        s
    }

    pub fn set(&self, r: Result<Value, ProviderError>) {
        *self.reply.borrow_mut() = Some(r);
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        self.calls.set(self.calls.get() + 1);
        self.offered.borrow_mut().push(req.tools.iter().map(|t| t.name.clone()).collect());
        let r = self.reply.borrow().clone().unwrap_or_else(|| Err(ProviderError::Decode("no reply scripted".into())));
        Box::pin(async move { r.map(|arguments| ProviderReply::call("planner_decision", arguments)) })
    }
}

/// A terminal whose output the test reads (behind a `CliOutlet::to_writer`).
#[derive(Clone, Default)]
pub struct Screen(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Screen {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Screen {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
