//! DecisionConsumer (spec §12): the user-inbound hook that short-circuits a pick before the
//! LLM is called. A reply the router matches is consumed (answered here, the agent never sees
//! it); any other reply passes through untouched.

use super::action::ActionExecutor;
use super::pending::{PendingDecision, PendingState};
use super::router::{DecisionRouter, Routed};
use crate::clock::SharedClock;
use crate::sessions::InboundHook;
use futures_util::future::LocalBoxFuture;
use raven_proto::TurnRequest;

pub struct DecisionConsumer {
    pub router: DecisionRouter,
    pub executor: ActionExecutor,
    pub clock: SharedClock,
}

impl InboundHook for DecisionConsumer {
    fn on_user_message<'a>(&'a self, req: &'a TurnRequest) -> LocalBoxFuture<'a, Option<crate::sessions::Answer>> {
        Box::pin(async move {
            let session = format!("{}:{}", req.channel, req.chat_id);
            match self.router.route(&session, &req.content, self.clock.now()).await {
                Ok(Routed::PassThrough) => None,
                Ok(Routed::Answer(a)) => Some(a.into()),
                Ok(Routed::Run { menu, choice }) => {
                    let picked = self.executor.execute(&menu, choice, &req.conversation_id).await;
                    if !picked.ran {
                        return Some(self.reopened(&menu, choice, picked.answer).into());
                    }
                    Some(picked.answer.into())
                }
                Err(e) => {
                    // The menus cannot be read: the reply goes to the agent rather than nowhere.
                    tracing::error!("menu replies not routed: {e}");
                    None
                }
            }
        })
    }
}

impl DecisionConsumer {
    /// A pick that did not run leaves its menu open, so the user can pick again.
    fn reopened(&self, menu: &PendingDecision, choice: usize, answer: String) -> String {
        let done = PendingState::Done { choice };
        match self.router.store.transition(&menu.id, &done, PendingState::Open) {
            Ok(true) => format!("{answer} (menu {} is still open)", menu.id),
            Ok(false) => answer,
            Err(e) => {
                tracing::warn!("menu {} could not be reopened: {e}", menu.id);
                answer
            }
        }
    }
}
