//! `[anticipation]`: how many days ahead each kind of dated item gets its heads-up, when its
//! line asks for no lead of its own (see [`crate::time::Need`]). A day or less is the day
//! before only.

use crate::time::Ladder;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnticipationConfig {
    /// A table, tickets, a place to book.
    pub booking_days: u32,
    /// A birthday, an anniversary, a wedding.
    pub occasion_days: u32,
    /// A flight, a train, a journey.
    pub trip_days: u32,
    /// A payment.
    pub payment_days: u32,
    /// Something to hand in.
    pub submission_days: u32,
    /// An exam, a check-up, a sports day.
    pub preparation_days: u32,
}

/// The longest lead a kind may have.
pub const MAX_DAYS: u32 = 60;

impl Default for AnticipationConfig {
    fn default() -> Self {
        let l = Ladder::default();
        AnticipationConfig {
            booking_days: l.booking,
            occasion_days: l.occasion,
            trip_days: l.trip,
            payment_days: l.payment,
            submission_days: l.submission,
            preparation_days: l.preparation,
        }
    }
}

impl AnticipationConfig {
    pub fn ladder(&self) -> Ladder {
        Ladder {
            booking: self.booking_days,
            occasion: self.occasion_days,
            trip: self.trip_days,
            payment: self.payment_days,
            submission: self.submission_days,
            preparation: self.preparation_days,
        }
    }

    /// Whether a lead is over [`MAX_DAYS`].
    pub(super) fn too_far(&self) -> bool {
        let l = self.ladder();
        [l.booking, l.occasion, l.trip, l.payment, l.submission, l.preparation].iter().any(|d| *d > MAX_DAYS)
    }
}
