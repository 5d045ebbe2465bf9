//! The `[brief]` section: one morning message that gathers the day (spec-level: issue
//! "anticipation", the morning brief).

use super::{TimeOfDay, Window};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// When the brief goes out: `"auto"` (the end of quiet hours, or 08:00 when there are none)
/// or a local time `"HH:MM"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BriefAt {
    #[default]
    Auto,
    At(TimeOfDay),
}

impl fmt::Display for BriefAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BriefAt::Auto => f.write_str("auto"),
            BriefAt::At(t) => write!(f, "{t}"),
        }
    }
}

impl Serialize for BriefAt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for BriefAt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(BriefAt::Auto);
        }
        chrono::NaiveTime::parse_from_str(s.trim(), "%H:%M").map(|t| BriefAt::At(TimeOfDay(t))).map_err(|_| {
            de::Error::custom(format!("`{s}` is not a time of day; write \"auto\" or a time as \"HH:MM\""))
        })
    }
}

/// The morning brief: today's items, the heads-ups whose lead starts today and today's
/// routines, in one message, once a day, on a day with something to say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BriefConfig {
    pub enabled: bool,
    pub at: BriefAt,
}

impl Default for BriefConfig {
    fn default() -> Self {
        BriefConfig { enabled: true, at: BriefAt::Auto }
    }
}

impl BriefConfig {
    /// The local time the brief goes out from: the configured one, else the end of quiet
    /// hours (the user's morning), else 08:00 when quiet hours are off.
    pub fn time(&self, quiet: &Window) -> TimeOfDay {
        match self.at {
            BriefAt::At(t) => t,
            BriefAt::Auto if quiet.start == quiet.end => TimeOfDay::hm(8, 0),
            BriefAt::Auto => quiet.end,
        }
    }
}

impl BriefConfig {
    /// When the next brief may come after `now`: today's time in `tz` if it is still ahead,
    /// else tomorrow's (it comes only on a day with something to say).
    pub fn next_after(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        tz: chrono_tz::Tz,
        quiet: &Window,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        let at = self.time(quiet).0;
        let today = now.with_timezone(&tz).date_naive();
        [today, today.succ_opt()?]
            .into_iter()
            .filter_map(|day| day.and_time(at).and_local_timezone(tz).earliest())
            .map(|t| t.with_timezone(&chrono::Utc))
            .find(|t| *t > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_brief_is_today_s_while_its_time_is_ahead_else_tomorrow_s() {
        use chrono::TimeZone;
        let tz = chrono_tz::Asia::Tokyo;
        let quiet = Window::new(TimeOfDay::hm(23, 0), TimeOfDay::hm(7, 0));
        let at = |d: u32, h: u32| tz.with_ymd_and_hms(2026, 12, d, h, 0, 0).unwrap().with_timezone(&chrono::Utc);
        let c = BriefConfig::default();
        assert_eq!(c.next_after(at(7, 6), tz, &quiet), Some(at(7, 7)));
        assert_eq!(c.next_after(at(7, 7), tz, &quiet), Some(at(8, 7)));
        assert_eq!(c.next_after(at(7, 22), tz, &quiet), Some(at(8, 7)));
    }

    #[test]
    fn the_brief_comes_at_the_end_of_quiet_hours_at_eight_without_them_or_when_set() {
        let quiet = Window::new(TimeOfDay::hm(22, 30), TimeOfDay::hm(6, 30));
        assert_eq!(BriefConfig::default().time(&quiet), TimeOfDay::hm(6, 30));
        let off = Window::new(TimeOfDay::hm(0, 0), TimeOfDay::hm(0, 0));
        assert_eq!(BriefConfig::default().time(&off), TimeOfDay::hm(8, 0));
        let set: BriefConfig = toml::from_str("at = \"09:15\"").unwrap();
        assert_eq!(set.time(&quiet), TimeOfDay::hm(9, 15));
        let auto: BriefConfig = toml::from_str("at = \"auto\"\nenabled = false").unwrap();
        assert_eq!((auto.at, auto.enabled), (BriefAt::Auto, false));
        let bad = toml::from_str::<BriefConfig>("at = \"9am\"").unwrap_err().to_string();
        assert!(bad.contains("write \"auto\" or a time as \"HH:MM\""), "{bad}");
    }
}
