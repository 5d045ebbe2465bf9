//! A provider around another (the tower `Layer` idea): a [`Decorator`] names its inner
//! provider and changes only what it is for (counting, metering, retrying, accounting);
//! everything else (the name, the prompt budget, whether the prompt is read, the usage that
//! rides the answer) is its inner provider's, by default.

use super::budget::PromptBudget;
use super::provider::{CompletionRequest, Provider, ProviderError, ProviderReply, SharedProvider};
use super::usage::Answer;
use futures_util::future::LocalBoxFuture;
use std::cell::Cell;
use std::rc::Rc;

pub trait Decorator: 'static {
    /// The provider it wraps.
    fn inner(&self) -> &SharedProvider;

    /// One call through it; by default the inner provider's answer as it came.
    fn around<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        self.inner().answer(req)
    }
}

impl<D: Decorator> Provider for D {
    fn name(&self) -> &str {
        self.inner().name()
    }

    fn reads_prompt(&self) -> bool {
        self.inner().reads_prompt()
    }

    fn prompt_budget(&self) -> PromptBudget {
        self.inner().prompt_budget()
    }

    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async move { self.around(req).await.reply })
    }

    fn answer<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        self.around(req)
    }
}

/// Wraps a provider and counts its calls (LLM calls made, for stats, tests and benches).
pub struct Counted {
    inner: SharedProvider,
    calls: Rc<Cell<u64>>,
}

impl Counted {
    pub fn new(inner: SharedProvider) -> (Counted, Rc<Cell<u64>>) {
        let calls = Rc::new(Cell::new(0));
        (Counted { inner, calls: calls.clone() }, calls)
    }
}

impl Decorator for Counted {
    fn inner(&self) -> &SharedProvider {
        &self.inner
    }

    fn around<'a>(&'a self, req: &'a CompletionRequest) -> LocalBoxFuture<'a, Answer> {
        self.calls.set(self.calls.get() + 1);
        self.inner.answer(req)
    }
}
