//! What a dated item needs ahead of its day, read from its words, English or Chinese: a table to
//! book, a present to buy, papers to prepare, money to send, a form to hand in, a bag to pack.
//! Such an item gets a heads-up that much before it, besides the one the day before, when its
//! line asks for no lead of its own (`a week before`, `提前3天`): the [`Ladder`] by kind, which
//! `[anticipation]` in config.toml sets. An appointment, or anything else, gets the day before
//! only.

use chrono::Duration;

/// The kinds of item that need time ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// A table, tickets, a place: booked a week ahead.
    Booking,
    /// A birthday, an anniversary, a wedding: a present or a plan, a week ahead.
    Occasion,
    /// A trip: packing, papers, a ride to the station, three days ahead.
    Trip,
    /// A payment: the money ready three days ahead.
    Payment,
    /// Something to hand in: three days to finish it.
    Submission,
    /// An exam, a check-up, a sports day: papers or an outfit, three days ahead.
    Preparation,
}

/// Words that name each kind, checked in this order (the first kind found wins). English words
/// match whole words, with an ending (`books`, `booked`, `paying`); Chinese ones anywhere.
const WORDS: &[(Need, &[&str], &[&str])] = &[
    (
        Need::Booking,
        &["book", "reserve", "reservation", "restaurant", "table for", "tickets"],
        &["订餐", "订位", "订票", "预订", "订酒店", "订餐厅", "餐厅", "订"],
    ),
    (
        Need::Occasion,
        &["birthday", "anniversary", "wedding", "party", "christmas"],
        &["生日", "纪念日", "婚礼", "聚会", "派对", "满月", "周岁"],
    ),
    (
        Need::Trip,
        &["flight", "fly to", "train to", "trip", "travel", "airport", "vacation", "holiday"],
        &["机票", "航班", "火车", "高铁", "出差", "旅行", "旅游", "出发"],
    ),
    (
        Need::Payment,
        &["pay", "payment", "rent", "bills", "invoice", "tax", "taxes", "fee", "tuition", "salary", "transfer"],
        &["付", "缴", "交费", "房租", "工资", "账单", "学费", "还款", "税", "转账"],
    ),
    (
        Need::Submission,
        &["submit", "hand in", "report", "application", "apply", "renew", "renewal", "essay", "proposal"],
        &["提交", "交报告", "报告", "申请", "续签", "作业", "论文", "截止"],
    ),
    (
        Need::Preparation,
        &["exam", "presentation", "check-up", "checkup", "sports day", "recital", "interview"],
        &["考试", "体检", "运动会", "演讲", "汇报", "面试", "比赛", "演出"],
    ),
];

/// How far ahead each kind gets its heads-up, in days (`[anticipation]` in config.toml); a day
/// or less is the day before only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ladder {
    pub booking: u32,
    pub occasion: u32,
    pub trip: u32,
    pub payment: u32,
    pub submission: u32,
    pub preparation: u32,
}

impl Default for Ladder {
    fn default() -> Self {
        Ladder { booking: 7, occasion: 7, trip: 3, payment: 3, submission: 3, preparation: 3 }
    }
}

/// The longest lead the learning loop gives a kind, in days.
pub const MAX_LEARNED_DAYS: u32 = 28;

impl Ladder {
    /// The lead `need` gets; `None` for the day before only.
    pub fn lead(&self, need: Need) -> Option<Duration> {
        let days = *self.days_of(need);
        (days > 1).then(|| Duration::days(i64::from(days)))
    }

    fn days_of(&self, need: Need) -> &u32 {
        match need {
            Need::Booking => &self.booking,
            Need::Occasion => &self.occasion,
            Need::Trip => &self.trip,
            Need::Payment => &self.payment,
            Need::Submission => &self.submission,
            Need::Preparation => &self.preparation,
        }
    }

    /// The ladder with each kind the user asked to hear of earlier `n` times (`/earlier`,
    /// "too late") twice as far ahead per time (a kind told the day before only starts from
    /// one day), at most [`MAX_LEARNED_DAYS`]: a payment 3 days, then 6, then 12.
    pub fn lengthened(&self, earlier: &std::collections::BTreeMap<String, u32>) -> Ladder {
        let mut out = *self;
        for (name, n) in earlier {
            let Some(need) = Need::named(name) else { continue };
            let base = (*self.days_of(need)).max(1);
            let days = base.saturating_mul(2u32.saturating_pow((*n).min(8))).min(MAX_LEARNED_DAYS).max(base);
            match need {
                Need::Booking => out.booking = days,
                Need::Occasion => out.occasion = days,
                Need::Trip => out.trip = days,
                Need::Payment => out.payment = days,
                Need::Submission => out.submission = days,
                Need::Preparation => out.preparation = days,
            }
        }
        out
    }
}

impl Need {
    /// The kind `text` names, if any.
    pub fn of(text: &str) -> Option<Need> {
        let lower = text.to_lowercase();
        let words: Vec<&str> =
            lower.split(|c: char| !c.is_alphanumeric() && c != '-').filter(|w| !w.is_empty()).collect();
        let joined = format!(" {} ", words.join(" "));
        WORDS.iter().find_map(|(need, english, chinese)| {
            let said_in_english = english.iter().any(|w| match w.contains(' ') {
                true => joined.contains(&format!(" {w} ")),
                false => words
                    .iter()
                    .any(|x| x.strip_prefix(w).is_some_and(|end| matches!(end, "" | "s" | "es" | "d" | "ed" | "ing"))),
            });
            (said_in_english || chinese.iter().any(|w| text.contains(w))).then_some(*need)
        })
    }

    /// The kind of `name` (`payment`), as [`Need::name`] says it.
    pub fn named(name: &str) -> Option<Need> {
        const ALL: [Need; 6] =
            [Need::Booking, Need::Occasion, Need::Trip, Need::Payment, Need::Submission, Need::Preparation];
        ALL.into_iter().find(|n| n.name() == name)
    }

    /// The kind in words, after "as for": `a booking`, `a payment`.
    /// Its name in config and records: `booking`, `payment`, ….
    pub fn name(self) -> &'static str {
        match self {
            Need::Booking => "booking",
            Need::Occasion => "occasion",
            Need::Trip => "trip",
            Need::Payment => "payment",
            Need::Submission => "submission",
            Need::Preparation => "preparation",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Need::Booking => "a booking",
            Need::Occasion => "an occasion",
            Need::Trip => "a trip",
            Need::Payment => "a payment",
            Need::Submission => "something to hand in",
            Need::Preparation => "something to prepare for",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_asked_earlier_doubles_its_lead_each_time_up_to_four_weeks() {
        let base = Ladder::default();
        let earlier = |pairs: &[(&str, u32)]| pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        let once = base.lengthened(&earlier(&[("payment", 1), ("nonsense", 3)]));
        assert_eq!((once.payment, once.booking), (6, 7), "only the kind asked for");
        assert_eq!(base.lengthened(&earlier(&[("payment", 2)])).payment, 12);
        assert_eq!(base.lengthened(&earlier(&[("booking", 5)])).booking, MAX_LEARNED_DAYS);
        let day_before = Ladder { trip: 0, ..base };
        assert_eq!(day_before.lengthened(&earlier(&[("trip", 1)])).trip, 2, "from one day");
        assert_eq!(Need::named("payment"), Some(Need::Payment));
    }

    #[test]
    fn an_item_s_words_name_what_it_needs_ahead_in_either_language() {
        let cases: &[(&str, Option<Need>)] = &[
            ("Book a table at Luigi's for our anniversary", Some(Need::Booking)),
            ("提前一周订餐厅", Some(Need::Booking)),
            ("Mia's birthday", Some(Need::Occasion)),
            ("结婚纪念日", Some(Need::Occasion)),
            ("Flight to Lisbon", Some(Need::Trip)),
            ("出差北京", Some(Need::Trip)),
            ("Pay the nanny", Some(Need::Payment)),
            ("Rent", Some(Need::Payment)),
            ("每月20号付阿姨工资5000", Some(Need::Payment)),
            ("Submit the tax return", Some(Need::Payment)),
            ("Hand in the quarterly report", Some(Need::Submission)),
            ("交报告", Some(Need::Submission)),
            ("Renew the passport", Some(Need::Submission)),
            ("小宝 三岁体检", Some(Need::Preparation)),
            ("运动会", Some(Need::Preparation)),
            ("Maths exam", Some(Need::Preparation)),
            ("Dentist", None),
            ("牙医", None),
            ("Call the bank", None),
            ("Team standup", None),
            ("Bookshelf assembly", None),
            ("Paying the plumber", Some(Need::Payment)),
            ("Taxi home", None),
            ("Buy toilet paper", None),
        ];
        for (text, need) in cases {
            assert_eq!(Need::of(text), *need, "{text}");
        }
        let ladder = Ladder::default();
        assert_eq!(ladder.lead(Need::Booking), Some(Duration::days(7)));
        assert_eq!(ladder.lead(Need::Payment), Some(Duration::days(3)));
        assert_eq!(Ladder { payment: 1, ..ladder }.lead(Need::Payment), None, "the day before only");
    }
}
