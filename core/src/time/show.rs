//! A time as a person reads it: in their zone, to the minute (`2026-05-15 15:00`). The caller
//! names the zone once per output, not on every line.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// `2026-05-15 15:00` in `tz`.
pub fn local(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string()
}

/// `Fri 15:00` in `tz`: for times within the coming week.
#[cfg(test)]
fn local_hm(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%a %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn times_are_shown_in_the_zone_to_the_minute() {
        let t = Utc.with_ymd_and_hms(2026, 5, 15, 13, 0, 59).unwrap();
        assert_eq!(local(t, chrono_tz::Europe::Berlin), "2026-05-15 15:00");
        assert_eq!(local(t, chrono_tz::Asia::Tokyo), "2026-05-15 22:00");
        assert_eq!(local_hm(t, chrono_tz::America::New_York), "Fri 09:00");
    }
}
