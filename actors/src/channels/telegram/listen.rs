//! Telegram's listening half: one long poll (`getUpdates`, read within bounds and update by
//! update) and what it brought, in order. The offset moves past each update once it is handled,
//! and past one that cannot be: an update the parser refuses, one the supervisor keeps
//! refusing (after [`updates::INBOX_TRIES`] tries), one in a batch that stays unreadable (after
//! [`updates::UNREADABLE_TRIES`], the later ones asked one update at a time) is skipped with a
//! WARN naming its id and kept as the channel's last error, never asked for again for ever. A
//! group an allowed user writes from is reachable before the turn runs, so its reply may go
//! there.

use super::api::CallError;
use super::updates::{self, Batch, Update};
use super::{id_text, Offsets, Telegram};
use crate::channels::buttons::Tapped;
use crate::channels::{ChannelError, Inbox};
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Handled update ids kept (the offset covers older ones).
const HANDLED_KEPT: usize = 500;

/// The most updates one poll asks for (Telegram's own limit).
const BATCH: u32 = 100;

impl Telegram {
    /// One long poll and what it brought, in order.
    pub(super) async fn poll(&self, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let mut offsets: Offsets = self.state.load();
        let stale = offsets.last_update_at.is_some_and(|t| chrono::Utc::now() - t > chrono::Duration::days(6));
        let req = json!({
            // A stale offset could confirm away the updates of a sequence begun anew; the
            // handled ids keep those already seen from being handled twice.
            "offset": if stale { 0 } else { offsets.offset },
            "timeout": self.poll_timeout_s,
            "limit": if self.stuck().one_at_a_time() { 1 } else { BATCH },
            "allowed_updates": ["message", "callback_query"],
        });
        let batch = match self.api.call_for::<Vec<Box<RawValue>>>("getUpdates", &req).await {
            Ok(raw) => updates::read(raw),
            Err(CallError::NotJson { why, body }) => match updates::read_lossy(&body) {
                Some(batch) => batch,
                None => return self.unreadable(&mut offsets, why, &updates::scan_ids(&body), inbox),
            },
            Err(CallError::CutShort(why)) => return self.unreadable(&mut offsets, why, &[], inbox),
            Err(e) => return Err(e.into()),
        };
        if batch.updates.is_empty() && batch.nameless > 0 {
            let why = "telegram getUpdates: updates without an update_id".to_owned();
            return self.unreadable(&mut offsets, why, &[], inbox);
        }
        self.stuck().batch_read();
        inbox.alive("telegram");
        self.take(batch, &mut offsets, stale, inbox).await
    }

    /// Handles each update of `batch` not handled yet, moving the offset past it.
    async fn take(
        &self,
        batch: Batch,
        offsets: &mut Offsets,
        stale: bool,
        inbox: &dyn Inbox,
    ) -> Result<(), ChannelError> {
        if batch.nameless > 0 {
            tracing::warn!("telegram: {} updates without an update_id were skipped", batch.nameless);
        }
        for update in batch.updates {
            let id = update.id();
            if !offsets.handled.contains(&id) {
                match update {
                    Update::Read { update, .. } => self.hand_over(id, &update, offsets, inbox).await?,
                    Update::Unreadable { why, .. } => {
                        skip(id, &format!("it is not JSON the parser takes: {why}"), inbox)
                    }
                }
                offsets.handled.push(id);
                let over = offsets.handled.len().saturating_sub(HANDLED_KEPT);
                offsets.handled.drain(..over);
            }
            offsets.offset = if stale { id + 1 } else { offsets.offset.max(id + 1) };
            offsets.last_update_at = Some(chrono::Utc::now());
            self.keep(offsets)?;
        }
        Ok(())
    }

    /// Hands update `id` to the inbox; when the supervisor did not take it, it is asked for
    /// again, up to [`updates::INBOX_TRIES`] times, then skipped.
    async fn hand_over(
        &self,
        id: i64,
        update: &Value,
        offsets: &mut Offsets,
        inbox: &dyn Inbox,
    ) -> Result<(), ChannelError> {
        match self.handle(update, offsets, inbox).await {
            Ok(()) => self.stuck().handed(),
            Err(e) => {
                if !self.stuck().inbox_failed(id) {
                    return Err(e);
                }
                skip(id, &format!("the supervisor did not take it in {} tries: {e}", updates::INBOX_TRIES), inbox);
            }
        }
        Ok(())
    }

    /// A batch that could not be read: a transient failure, until it has failed
    /// [`updates::UNREADABLE_TRIES`] times in a row; then the update it holds (the first of
    /// `ids` at or past the offset; or, with none to read, the offset itself, as Telegram
    /// numbers its updates one after another) is skipped.
    fn unreadable(
        &self,
        offsets: &mut Offsets,
        why: String,
        ids: &[i64],
        inbox: &dyn Inbox,
    ) -> Result<(), ChannelError> {
        if !self.stuck().batch_unreadable() {
            return Err(ChannelError::Transient(why));
        }
        let first = ids.iter().copied().filter(|&id| id >= offsets.offset).min();
        let Some(id) = first.or((offsets.offset > 0).then_some(offsets.offset)) else {
            return Err(ChannelError::Transient(format!("{why} (and no update id can be read from it)")));
        };
        skip(id, &format!("its batch cannot be read: {why}"), inbox);
        self.stuck().batch_read();
        offsets.offset = id + 1;
        self.keep(offsets)
    }

    /// Hands one update to the inbox. The group chat an allowed user wrote from is kept as
    /// reachable before the turn runs (its reply goes there).
    async fn handle(&self, update: &Value, offsets: &mut Offsets, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        if let Some(m) = update.get("message") {
            let from = id_text(&m["from"]["id"]);
            let chat = id_text(&m["chat"]["id"]);
            let text = m.get("text").and_then(Value::as_str).unwrap_or_default();
            if !self.allowed.admits(&from) || text.trim().is_empty() || chat.is_empty() {
                return Ok(());
            }
            if !offsets.chats.contains(&chat) && !self.users.contains(&chat) {
                offsets.chats.push(chat.clone());
                self.keep(offsets)?;
            }
            let aimed = aimed_by_reply(text, m);
            return inbox.message("telegram", &chat, aimed.as_deref().unwrap_or(text)).await;
        }
        if let Some(q) = update.get("callback_query") {
            self.tapped(q, inbox).await?;
        }
        Ok(())
    }

    /// A tap on a button: a verdict, or a menu pick (the turn `/pick <menu> <n>` would be).
    /// The tap is answered at once (Telegram stops the button's spinner); a pick's turn
    /// follows.
    async fn tapped(&self, q: &Value, inbox: &dyn Inbox) -> Result<(), ChannelError> {
        let from = id_text(&q["from"]["id"]);
        if !self.allowed.admits(&from) {
            return Ok(());
        }
        let data = q.get("data").and_then(Value::as_str).unwrap_or_default();
        let (words, pick) = match Tapped::decode(data) {
            Some(Tapped::Verdict { verdict, nudge }) => {
                (inbox.verdict(&nudge, verdict).unwrap_or_else(|e| e.to_string()), None)
            }
            Some(Tapped::Pick { menu, n }) => (format!("Picked {n}."), Some(format!("/pick {menu} {n}"))),
            None => ("This button is not one of Raven's.".to_owned(), None),
        };
        let answer = json!({"callback_query_id": q["id"], "text": words});
        if let Err(e) = self.api.call("answerCallbackQuery", &answer).await {
            tracing::warn!("telegram: a tap was taken but not answered: {e}");
        }
        if let Some(pick) = pick {
            let chat = id_text(&q["message"]["chat"]["id"]);
            inbox.message("telegram", if chat.is_empty() { &from } else { &chat }, &pick).await?;
        }
        Ok(())
    }

    /// Writes `offsets` to `gateway/telegram.json`.
    fn keep(&self, offsets: &Offsets) -> Result<(), ChannelError> {
        self.state.save(offsets).map_err(|e| ChannelError::Transient(format!("gateway/telegram.json: {e}")))
    }
}

/// `/ok` or `/stop` sent as a reply to a nudge: aimed at that nudge (`/stop [3fa2c1]`), found
/// by the buttons the replied-to message carries. `None`: the text goes as it is.
fn aimed_by_reply(text: &str, m: &Value) -> Option<String> {
    crate::channels::buttons::aimed_at_reply(text, || {
        let rows = m["reply_to_message"]["reply_markup"]["inline_keyboard"].as_array()?;
        rows.iter().flat_map(|r| r.as_array().into_iter().flatten()).find_map(|button| {
            match Tapped::decode(button["callback_data"].as_str()?)? {
                Tapped::Verdict { nudge, .. } => Some(nudge),
                Tapped::Pick { .. } => None,
            }
        })
    })
}

/// Update `id` is given up on: said in the log and kept as the channel's last error.
fn skip(id: i64, why: &str, inbox: &dyn Inbox) {
    let why = format!("update {id} was skipped: {why}");
    tracing::warn!(update_id = id, "telegram: {why}");
    inbox.skipped("telegram", &why);
}
