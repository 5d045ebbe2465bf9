//! Reading back a gap: when more happened in the room than one sync shows (a `limited`
//! timeline), the events before it are read with `/messages`, backwards, until one already
//! seen. A homeserver may answer page after page with nothing and a new `end`; so one gap is
//! read for at most [`GAP_PAGES`] pages (an empty one counts), [`GAP_TIME`] and [`GAP_MAX`]
//! events, and then the sync goes on. A gap cut short is logged; [`CUT_SHORT_FAILING`] of them
//! in a row with nothing read back make the channel report the trouble (`failing`).

use super::{enc, Matrix};
use crate::channels::ChannelError;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// At most this many events of a gap are read back.
const GAP_MAX: usize = 1000;
/// At most this many pages are asked for one gap (100 events a page: room for [`GAP_MAX`]).
pub const GAP_PAGES: usize = 20;
/// And for at most this long.
pub const GAP_TIME: Duration = Duration::from_secs(30);
/// Gaps cut short in a row, with no event read back, before the channel says it is failing.
pub const CUT_SHORT_FAILING: u32 = 3;

/// What was read back of one gap.
struct Gap {
    /// Oldest first.
    events: Vec<Value>,
    pages: usize,
    /// The pages or the time ran out before an event already seen (or the room's start).
    cut_short: bool,
}

impl Matrix {
    /// The events of the gap before `prev_batch`, oldest first, and the trouble to report once
    /// the sync is done (gaps cut short again and again with nothing read back).
    pub(super) async fn read_gap(
        &self,
        token: &str,
        prev_batch: Option<&str>,
    ) -> Result<(Vec<Value>, Option<ChannelError>), ChannelError> {
        let gap = self.page_back(token, prev_batch).await?;
        tracing::info!("matrix: {} events read back from a gap in the room", gap.events.len());
        let trouble = self.note(&gap);
        Ok((gap.events, trouble))
    }

    async fn page_back(&self, token: &str, prev_batch: Option<&str>) -> Result<Gap, ChannelError> {
        let last_ts = self.saved().last_ts;
        let deadline = tokio::time::Instant::now() + GAP_TIME;
        let (mut from, mut older, mut pages, mut cut_short) = (prev_batch.map(String::from), Vec::new(), 0, false);
        while let Some(f) = from.take() {
            if pages == GAP_PAGES {
                cut_short = true;
                break;
            }
            pages += 1;
            let path = format!("/rooms/{}/messages?dir=b&limit=100&from={}", enc(&self.room_id), enc(&f));
            let asked = self.request(reqwest::Method::GET, &path, Some(token), None);
            let Ok(page) = tokio::time::timeout_at(deadline, asked).await else {
                cut_short = true;
                break;
            };
            let page = page?;
            let chunk = page["chunk"].as_array().cloned().unwrap_or_default();
            let seen = |e: &Value| e["origin_server_ts"].as_i64().is_some_and(|t| t <= last_ts);
            let reached = chunk.iter().any(seen);
            older.extend(chunk.into_iter().take_while(|e| !seen(e)));
            if !reached && older.len() < GAP_MAX {
                from = page["end"].as_str().map(String::from);
            }
        }
        older.reverse();
        Ok(Gap { events: older, pages, cut_short })
    }

    /// Counts a gap cut short with nothing read back (any other gap starts the count anew);
    /// the trouble once they are [`CUT_SHORT_FAILING`] in a row.
    fn note(&self, gap: &Gap) -> Option<ChannelError> {
        if !gap.cut_short {
            self.gaps_cut.store(0, Ordering::Relaxed);
            return None;
        }
        tracing::warn!(
            "matrix: a gap in the room was read back only in part ({} events in {} pages, at most {GAP_PAGES} pages \
             and {} s a gap); older messages of it are not answered",
            gap.events.len(),
            gap.pages,
            GAP_TIME.as_secs()
        );
        if !gap.events.is_empty() {
            self.gaps_cut.store(0, Ordering::Relaxed);
            return None;
        }
        let in_a_row = self.gaps_cut.fetch_add(1, Ordering::Relaxed) + 1;
        (in_a_row >= CUT_SHORT_FAILING).then(|| {
            ChannelError::Transient(format!(
                "matrix: {in_a_row} gaps in a row could not be read back (the homeserver's /messages gave no event \
                 in {GAP_PAGES} pages or {} s); messages sent in them are not answered",
                GAP_TIME.as_secs()
            ))
        })
    }
}
