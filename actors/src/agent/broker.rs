//! ask_user and its QuestionBroker (spec §13): a turn asks the user a structured question
//! and waits for the answer. One question is pending per conversation; an overlapping
//! question fail-safes the stale one. One call shares one budget (600 s by default) across
//! all its questions, and a question not answered in time gets its fail-safe answer, so a
//! forgotten question never wedges a lane (or the user pool slot the turn holds).

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::oneshot;

/// The `clarify.request` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClarifyRequest {
    pub question: String,
    pub choices: Vec<String>,
    /// A short chip label.
    pub header: String,
    /// The option the agent would pick.
    pub recommended: Option<String>,
    /// What is left of the call's shared budget.
    pub timeout_s: u64,
    pub index: usize,
    pub total: usize,
    /// Identifies the call the question belongs to.
    pub batch: String,
}

impl ClarifyRequest {
    /// The answer when none comes: the recommended choice, else the first, else a marker.
    pub fn fail_safe(&self) -> String {
        self.recommended.clone().or_else(|| self.choices.first().cloned()).unwrap_or_else(|| "(no answer)".into())
    }

    /// The question as a channel message: numbered choices, the recommended one marked.
    pub fn render(&self) -> String {
        let mut out = format!("❓ {}", self.question);
        for (i, c) in self.choices.iter().enumerate() {
            let rec = if self.recommended.as_deref() == Some(c) { " (recommended)" } else { "" };
            out.push_str(&format!("\n{}. {c}{rec}", i + 1));
        }
        out
    }
}

type Emit = Box<dyn Fn(&str, &ClarifyRequest)>;

pub struct QuestionBroker {
    pending: RefCell<HashMap<String, (ClarifyRequest, oneshot::Sender<String>)>>,
    emit: Emit,
    budget: Duration,
    batches: RefCell<u64>,
}

impl QuestionBroker {
    /// `emit` shows a question to the user (posts it to the channel, or notifies a TUI).
    pub fn new(budget: Duration, emit: Emit) -> Self {
        QuestionBroker { pending: Default::default(), emit, budget, batches: RefCell::new(0) }
    }

    pub fn pending_req(&self, conversation: &str) -> Option<ClarifyRequest> {
        self.pending.borrow().get(conversation).map(|(r, _)| r.clone())
    }

    /// Answers the pending question of `conversation`; false when none is pending. A
    /// numeric reply picks that choice.
    pub fn reply(&self, conversation: &str, text: &str) -> bool {
        let Some((req, tx)) = self.pending.borrow_mut().remove(conversation) else { return false };
        let answer = match text.trim().parse::<usize>() {
            Ok(n) if n >= 1 && n <= req.choices.len() => req.choices[n - 1].clone(),
            _ => text.trim().to_owned(),
        };
        tx.send(answer).is_ok()
    }

    /// Asks the questions one at a time within one shared budget; every question gets an
    /// answer (the user's, or its fail-safe).
    pub async fn ask(&self, conversation: &str, questions: Vec<ClarifyRequest>) -> Vec<String> {
        let batch = {
            let mut b = self.batches.borrow_mut();
            *b += 1;
            format!("{conversation}#{b}")
        };
        let deadline = tokio::time::Instant::now() + self.budget;
        let total = questions.len();
        let mut answers = Vec::new();
        for (index, mut q) in questions.into_iter().enumerate() {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            q.index = index;
            q.total = total;
            q.batch = batch.clone();
            q.timeout_s = left.as_secs();
            if left.is_zero() {
                answers.push(q.fail_safe());
                continue;
            }
            let (tx, rx) = oneshot::channel();
            let stale = self.pending.borrow_mut().insert(conversation.to_owned(), (q.clone(), tx));
            if let Some((old, old_tx)) = stale {
                let _ = old_tx.send(old.fail_safe());
            }
            (self.emit)(conversation, &q);
            let answer = match tokio::time::timeout(left, rx).await {
                Ok(Ok(a)) => a,
                _ => {
                    let mut p = self.pending.borrow_mut();
                    if p.get(conversation).is_some_and(|(r, _)| r.batch == q.batch && r.index == q.index) {
                        p.remove(conversation);
                    }
                    q.fail_safe()
                }
            };
            answers.push(answer);
        }
        answers
    }
}
