//! What keeps the daily menu worth opening over weeks: not on the days the user did not ask
//! for (`discovery.days`, weekdays by default), not on a day when nothing on it is new (every
//! option was offered within the last [`NEW_AFTER_DAYS`] days: yesterday's menu is not sent
//! again), and a proposal the gate denied is offered again later that day as it was, without
//! asking a model again.

use super::pending::Choice;
use crate::store::JsonStateStore;
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use std::collections::BTreeMap;

/// An option offered this many days ago or more counts as new again.
pub const NEW_AFTER_DAYS: i64 = 7;

const SECTION: &str = "discovery_offered";

/// The proposal of a day the gate denied: offered again on a later tick of that day.
#[derive(Debug, Clone, Default)]
pub struct Held(Option<(NaiveDate, Vec<Choice>)>);

impl Held {
    pub fn take_for(&mut self, day: NaiveDate) -> Option<Vec<Choice>> {
        match self.0.take() {
            Some((d, options)) if d == day => Some(options),
            _ => None,
        }
    }

    pub fn keep(&mut self, day: NaiveDate, options: Vec<Choice>) {
        self.0 = Some((day, options));
    }
}

/// `days` empty means every day.
pub fn allowed_on(days: &[Weekday], date: NaiveDate) -> bool {
    days.is_empty() || days.contains(&date.weekday())
}

/// When each option title was last offered (in `sentinel/state/discovery.json`, shared with restarts and peers).
pub struct Offered<'a>(pub &'a JsonStateStore);

impl Offered<'_> {
    fn read(&self) -> BTreeMap<String, NaiveDate> {
        self.0.read::<BTreeMap<String, NaiveDate>>(SECTION).map(|(m, _)| m).unwrap_or_default()
    }

    /// At least one option was never offered, or not within the last [`NEW_AFTER_DAYS`] days.
    pub fn any_new(&self, options: &[Choice], today: NaiveDate) -> bool {
        let seen = self.read();
        options.iter().any(|o| seen.get(&o.title).is_none_or(|last| today - *last >= Duration::days(NEW_AFTER_DAYS)))
    }

    /// Remembers the options of a menu that went out; titles unseen for 60 days are forgotten.
    pub fn remember(&self, options: &[Choice], today: NaiveDate) {
        let r = self.0.update(SECTION, |m: &mut BTreeMap<String, NaiveDate>| {
            for o in options {
                m.insert(o.title.clone(), today);
            }
            m.retain(|_, last| today - *last < Duration::days(60));
        });
        if let Err(e) = r {
            tracing::warn!("the offered options are not kept: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::pending::ChoiceAction;

    fn choice(title: &str) -> Choice {
        Choice {
            title: title.into(),
            reason: String::new(),
            action: ChoiceAction::Reply { text: "ok".into() },
            confirm: false,
        }
    }

    #[test]
    fn a_menu_of_options_offered_this_week_is_not_sent_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonStateStore::new(dir.path().join("state.json"));
        let offered = Offered(&store);
        let monday = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
        let options = [choice("Book the dentist")];
        assert!(offered.any_new(&options, monday));
        offered.remember(&options, monday);
        assert!(!offered.any_new(&options, monday + Duration::days(1)), "yesterday's menu is not new");
        let more = [choice("Book the dentist"), choice("Renew the passport")];
        assert!(offered.any_new(&more, monday + Duration::days(1)), "one option is");
        offered.remember(&more, monday + Duration::days(1));
        assert!(!offered.any_new(&options, monday + Duration::days(7)), "offered again on Tuesday");
        assert!(offered.any_new(&options, monday + Duration::days(8)), "a week after it was last offered");
    }

    #[test]
    fn weekdays_by_default_and_a_held_proposal_lasts_its_day() {
        let weekdays = [Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri];
        let saturday = NaiveDate::from_ymd_opt(2026, 3, 7).unwrap();
        assert!(!allowed_on(&weekdays, saturday) && allowed_on(&weekdays, saturday - Duration::days(1)));
        assert!(allowed_on(&[], saturday));
        let mut held = Held::default();
        held.keep(saturday, vec![choice("a")]);
        assert!(held.take_for(saturday + Duration::days(1)).is_none(), "not the next day");
        held.keep(saturday, vec![choice("a")]);
        assert_eq!(held.take_for(saturday).unwrap().len(), 1);
        assert!(held.take_for(saturday).is_none(), "taken");
    }
}
