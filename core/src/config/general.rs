//! `[general]`: the user's zone and how numeric dates are read.

use crate::time::{DateOrder, LanguageSetting, ZoneSource};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeneralConfig {
    /// The user's IANA time zone: quiet hours, day quotas and weekends are read in it. When the
    /// file does not set it, [`RavenConfig::load`] resolves it from `TZ`, then the system zone.
    pub timezone: Tz,
    /// How a numeric date with `/` in the user's notes is read: `month_first` (5/6 is May 6)
    /// or `day_first` (5 June). Dates with `.` are always day first.
    pub date_order: DateOrder,
    /// The language the rules write reminders and heads-ups in: `auto` (that of the notes,
    /// MEMORY.md), `en` or `zh`.
    pub language: LanguageSetting,
    /// Where `timezone` came from (not a key of the file).
    #[serde(skip)]
    pub timezone_source: ZoneSource,
    /// What could not be read while resolving the zone (not a key of the file).
    #[serde(skip)]
    pub timezone_warning: Option<String>,
}

impl Default for GeneralConfig {
    fn default() -> Self {
        GeneralConfig {
            timezone: Tz::UTC,
            date_order: DateOrder::default(),
            language: LanguageSetting::default(),
            timezone_source: ZoneSource::Fallback,
            timezone_warning: None,
        }
    }
}
