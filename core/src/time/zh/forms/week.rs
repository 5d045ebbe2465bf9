//! Days of the week: `周三`, `星期天`, `礼拜四`, with the week they are in (`下周三`, `本周五`) or
//! that they repeat (`每周二`, `每周一三五`, and every other week: `隔周一`, `每两周周一`).

use super::Scan;

/// What the words before `周` say of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Week {
    Plain,
    This,
    Next,
    Every,
    /// Every other week: `every other monday`.
    Other,
    /// Every third week or more (`每三周一`): no schedule either reader says, left as written.
    Weeks,
}

const WEEK_LEADS: &[(&str, Week)] = &[
    ("下个", Week::Next),
    ("下", Week::Next),
    ("本", Week::This),
    ("这个", Week::This),
    ("这", Week::This),
    ("每个", Week::Every),
    ("每", Week::Every),
    ("", Week::Plain),
];
const WEEK_WORDS: &[&str] = &["星期", "礼拜", "禮拜", "周", "週"];
/// After a day of the week's number, a count (`每周一次`, once a week): no day is said.
const TIMES: char = '次';
const WEEKDAYS: &[(char, &str)] = &[
    ('一', "monday"),
    ('二', "tuesday"),
    ('三', "wednesday"),
    ('四', "thursday"),
    ('五', "friday"),
    ('六', "saturday"),
    ('日', "sunday"),
    ('天', "sunday"),
];

/// `周三`, `星期天`, `下周三`, `本周五`, `每周二`, `每周一三五`, `隔周一`, `每两周周一`.
pub(super) fn week_day(scan: &mut Scan) -> Option<Vec<String>> {
    let written = scan.at;
    let lead = scan.attempt(every_few_weeks).or_else(|| {
        WEEK_LEADS.iter().find_map(|(word, week)| {
            let mut probe = Scan { text: scan.text, at: scan.at };
            (probe.word(word) && WEEK_WORDS.iter().any(|w| probe.word(w))).then_some((probe.at, *week))
        })
    });
    let (at, week) = lead?;
    scan.at = at;
    let mut days = Vec::new();
    while let Some(name) = scan.weekday() {
        days.push(name.to_owned());
        if !matches!(week, Week::Every | Week::Other | Week::Weeks) {
            break;
        }
        let mut probe = Scan { text: scan.text, at: scan.at };
        if (probe.word("、") || probe.word("和")) && probe.weekday().is_some() {
            scan.word("、");
            scan.word("和");
        }
    }
    let first = days.first()?.clone();
    Some(match week {
        Week::Plain => vec![first],
        Week::This => vec![first, "this".into(), "week".into()],
        Week::Next => vec![first, "next".into(), "week".into()],
        Week::Every => std::iter::once("every".to_owned()).chain(days).collect(),
        Week::Other => ["every", "other"].map(String::from).into_iter().chain(days).collect(),
        Week::Weeks => vec![scan.text[written..scan.at].to_owned()],
    })
}

/// `隔周`, `双周`, `每两周`, `每隔一周`, `每两个星期`, `每3周`, and the `周` of the day when it is
/// written again (`隔周周一`): the week it says, and where the day's number starts. `每隔一周`
/// skips one week: every other week; `每隔两周` (skipping two, or every two weeks: it is said
/// both ways) is left as written, as every third week and more are.
fn every_few_weeks(scan: &mut Scan) -> Option<(usize, Week)> {
    let weeks = if scan.word("隔") || scan.word("双") {
        2
    } else if scan.word("每") {
        let skip = scan.word("隔");
        let count = scan.count()?;
        scan.word("个");
        if skip {
            count + 1
        } else {
            count
        }
    } else {
        return None;
    };
    if !WEEK_WORDS.iter().any(|w| scan.word(w)) {
        return None;
    }
    WEEK_WORDS.iter().any(|w| scan.word(w));
    let week = match weeks {
        1 => Week::Every,
        2 => Week::Other,
        _ => Week::Weeks,
    };
    Some((scan.at, week))
}

impl Scan<'_> {
    /// A day of the week's character (`一`, `日`), not a count (`一次`).
    fn weekday(&mut self) -> Option<&'static str> {
        let mut chars = self.rest().chars();
        let c = chars.next()?;
        let (_, name) = WEEKDAYS.iter().find(|(day, _)| *day == c)?;
        if chars.next() == Some(TIMES) {
            return None;
        }
        self.at += c.len_utf8();
        Some(name)
    }
}
