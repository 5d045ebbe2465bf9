//! An outlet that keeps what it is handed, stamped with the simulated time: every delivery of
//! the run is seen, none leaves the process.

use crate::clock::SharedClock;
use crate::delivery::outlets::{Outlet, OutletError};
use chrono::{DateTime, Utc};
use futures_util::future::LocalBoxFuture;
use raven_proto::OutboundText;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub at: DateTime<Utc>,
    pub channel: String,
    pub chat_id: String,
    pub proactive: bool,
    pub content: String,
    /// A proactive message's id.
    pub nudge_id: Option<String>,
}

pub type Deliveries = Arc<Mutex<Vec<Delivery>>>;

pub struct Capture {
    channel: String,
    clock: SharedClock,
    seen: Deliveries,
}

impl Capture {
    pub fn new(channel: &str, clock: SharedClock, seen: Deliveries) -> Self {
        Capture { channel: channel.to_owned(), clock, seen }
    }
}

impl Outlet for Capture {
    fn channel(&self) -> &str {
        &self.channel
    }

    fn deliver<'a>(&'a self, text: &'a OutboundText) -> LocalBoxFuture<'a, Result<(), OutletError>> {
        let d = Delivery {
            at: self.clock.now(),
            channel: text.channel.clone(),
            chat_id: text.chat_id.clone(),
            proactive: text.is_proactive(),
            content: text.content.clone(),
            nudge_id: text.extras.get(raven_proto::NUDGE_ID).cloned(),
        };
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).push(d);
        Box::pin(async { Ok(()) })
    }
}

/// Takes what was captured so far.
pub fn drain(seen: &Deliveries) -> Vec<Delivery> {
    std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()))
}
