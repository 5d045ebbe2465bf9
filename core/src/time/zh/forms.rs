//! The time forms of Chinese, each read at the start of a text by a small cursor and a table of
//! its words: days (`明天`), days of the week (`下周三`, every other week `隔周一`), recurring
//! words (`每天`), clock times (`下午3点`), dates (`12月20日`, `12月底`) and the start of a
//! recurrence (`从3月2日起`), days of the month (`20号`, `下个月5号`), the end of a month (`月底`,
//! `下个月底`) and spans from now (`3小时后`).

mod week;

use week::week_day;

/// The three-letter month names the month reader knows.
const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// Days named by a word: (the word, what it stands for, a part of the day it also says).
const DAYS: &[(&str, &[&str], Option<Period>)] = &[
    ("大后天", &["3", "days", "from", "today"], None),
    ("后天", &["day", "after", "tomorrow"], None),
    ("下个月底", &["end", "of", "next", "month"], None),
    ("下月底", &["end", "of", "next", "month"], None),
    ("本月底", &["end", "of", "this", "month"], None),
    ("这个月底", &["end", "of", "this", "month"], None),
    ("月底", &["end", "of", "the", "month"], None),
    ("今天", &["today"], None),
    ("今日", &["today"], None),
    ("明天", &["tomorrow"], None),
    ("明日", &["tomorrow"], None),
    ("今晚", &["today"], Some(Period::EVENING)),
    ("明晚", &["tomorrow"], Some(Period::EVENING)),
    ("今早", &["today"], Some(Period::MORNING)),
    ("明早", &["tomorrow"], Some(Period::MORNING)),
];

/// Words that repeat (`every day`, `every weekday`, `every month`) and that make a deadline
/// (`due`).
const EVERY: &[(&str, &[&str])] = &[
    ("截止日期", &["due"]),
    ("截止", &["due"]),
    ("截至", &["due"]),
    ("每个工作日", &["every", "weekday"]),
    ("每工作日", &["every", "weekday"]),
    ("工作日", &["every", "weekday"]),
    ("每天", &["every", "day"]),
    ("每日", &["every", "day"]),
    ("天天", &["every", "day"]),
    ("每个月", &["every", "month"]),
    ("每月", &["every", "month"]),
    ("每周末", &["every", "weekend"]),
];

/// A part of the day: how an hour said in it reads on the 24-hour clock, and its hour when no
/// hour is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Period {
    afternoon: bool,
    noon: bool,
    default_hour: u32,
}

impl Period {
    const MORNING: Period = Period { afternoon: false, noon: false, default_hour: 8 };
    const EVENING: Period = Period { afternoon: true, noon: false, default_hour: 20 };

    /// The hour on the 24-hour clock: `下午3点` is 15, `中午1点` 13, `上午10点` 10.
    fn hour(self, hour: u32) -> Option<u32> {
        let hour = match (self.afternoon, self.noon) {
            (true, _) if hour < 12 => hour + 12,
            (false, true) if hour < 11 => hour + 12,
            (false, false) if hour > 12 => return None,
            _ => hour,
        };
        (hour < 24).then_some(hour)
    }
}

const PERIODS: &[(&str, Period)] = &[
    ("早上", Period::MORNING),
    ("早晨", Period::MORNING),
    ("上午", Period { afternoon: false, noon: false, default_hour: 9 }),
    ("凌晨", Period { afternoon: false, noon: false, default_hour: 1 }),
    ("中午", Period { afternoon: false, noon: true, default_hour: 12 }),
    ("下午", Period { afternoon: true, noon: false, default_hour: 15 }),
    ("傍晚", Period { afternoon: true, noon: false, default_hour: 18 }),
    ("晚上", Period::EVENING),
];

/// The units of a span before `后` (after): (the unit, minutes or a unit word, its size).
const SPANS: &[(&str, &str, u32)] = &[
    ("小时", "minutes", 60),
    ("钟头", "minutes", 60),
    ("分钟", "minutes", 1),
    ("天", "days", 1),
    ("周", "weeks", 1),
    ("星期", "weeks", 1),
];
const AFTER: &[&str] = &["以后", "之后", "后"];
/// After a day or a time: before it, a deadline (`周五前`, `下午3点之前`).
const BEFORE: &[&str] = &["之前", "以前", "前"];

/// The time form at the start of `text`: its length and the words it stands for.
pub(super) fn matched(text: &str) -> Option<(usize, Vec<String>)> {
    let mut scan = Scan { text, at: 0 };
    if let Some(words) = scan.attempt(every_word).or_else(|| scan.attempt(span)) {
        return Some((scan.at, words));
    }
    let mut words = scan
        .attempt(next_month_day)
        .or_else(|| scan.attempt(day_word))
        .or_else(|| scan.attempt(week_day))
        .or_else(|| scan.attempt(Scan::clock))
        .or_else(|| scan.attempt(since))
        .or_else(|| scan.attempt(date))
        .or_else(|| scan.attempt(day_of_month))?;
    if BEFORE.iter().any(|word| scan.word(word)) {
        words.push("due".into());
    }
    Some((scan.at, words))
}

/// `今天`, `明晚`, `后天` and the time of day that may follow.
fn day_word(scan: &mut Scan) -> Option<Vec<String>> {
    let (_, words, period) = DAYS.iter().find(|(word, _, _)| scan.word(word))?;
    let mut out: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    let time = match period {
        Some(period) => scan.hour_in(*period).or_else(|| Some(clock_word(period.default_hour, 0))),
        None => None,
    };
    out.extend(time);
    Some(out)
}

fn every_word(scan: &mut Scan) -> Option<Vec<String>> {
    let (_, words) = EVERY.iter().find(|(word, _)| scan.word(word))?;
    Some(words.iter().map(|w| (*w).to_owned()).collect())
}

/// `从3月2日起`, `从2026年3月2日开始`, `3月2日起`: from that date (the start of a recurrence).
fn since(scan: &mut Scan) -> Option<Vec<String>> {
    let from = scan.word("从");
    let day = date(scan)?;
    let onward = ["起", "开始"].iter().any(|word| scan.word(word));
    (from || onward).then(|| std::iter::once("from".to_owned()).chain(day).collect())
}

/// `12月20日`, `2026年12月20号`.
fn date(scan: &mut Scan) -> Option<Vec<String>> {
    let year = scan.attempt(|s| {
        let year = s.number().filter(|y| (1000..=9999).contains(y))?;
        s.word("年").then_some(year)
    });
    let month = scan.count().filter(|m| (1..=12).contains(m))?;
    let month_said = scan.word("月");
    if month_said && scan.word("底") {
        // `12月底`: the month's last day (February's 28th, whatever the year).
        let last = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month as usize - 1];
        let mut out = vec![MONTHS[month as usize - 1].to_owned(), last.to_string()];
        out.extend(year.map(|y| y.to_string()));
        return Some(out);
    }
    let day = scan.count().filter(|d| (1..=31).contains(d))?;
    let day_said = scan.word("日") || scan.word("号") || scan.word("號");
    if !(month_said && day_said) {
        return None;
    }
    let mut out = vec![MONTHS[month as usize - 1].to_owned(), day.to_string()];
    out.extend(year.map(|y| y.to_string()));
    Some(out)
}

/// `下个月5号`, `下月20日`: that day of next month.
fn next_month_day(scan: &mut Scan) -> Option<Vec<String>> {
    if !(scan.word("下个月") || scan.word("下月")) {
        return None;
    }
    let mut words = day_of_month(scan)?;
    words.extend(["of", "next", "month"].map(String::from));
    Some(words)
}

/// `20号`, `20日`: the 20th of a month.
fn day_of_month(scan: &mut Scan) -> Option<Vec<String>> {
    let day = scan.count().filter(|d| (1..=31).contains(d))?;
    (scan.word("号") || scan.word("號") || scan.word("日")).then(|| vec!["the".to_owned(), day.to_string()])
}

/// `3小时后`, `半小时后`, `一个半小时后`, `10分钟后`, `2天后`.
fn span(scan: &mut Scan) -> Option<Vec<String>> {
    let count = scan.count();
    scan.word("个");
    let half = scan.word("半");
    let (count, half) = match (count, half) {
        (None, false) => return None,
        (count, half) => (count.unwrap_or(0), half),
    };
    let (_, unit, size) = SPANS.iter().find(|(word, _, _)| scan.word(word))?;
    if !AFTER.iter().any(|word| scan.word(word)) {
        return None;
    }
    let amount = match (half, *size) {
        (true, 60) => count * 60 + 30,
        (true, _) => return None,
        (false, size) => count * size,
    };
    Some(vec!["in".into(), amount.to_string(), (*unit).into()])
}

/// `HH:MM` on the 24-hour clock.
fn clock_word(hour: u32, minute: u32) -> String {
    format!("{hour:02}:{minute:02}")
}

/// A cursor over the text of one form; spaces inside it are skipped.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    /// `read` from here; on `None`, back to where it started.
    fn attempt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let at = self.at;
        let found = read(self);
        if found.is_none() {
            self.at = at;
        }
        found
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// Takes `word` (after spaces when `word` is a unit written after a number).
    fn word(&mut self, word: &str) -> bool {
        let rest = self.rest();
        let trimmed = rest.trim_start();
        let skip = if !word.is_empty() && trimmed.starts_with(word) { rest.len() - trimmed.len() } else { 0 };
        if rest[skip..].starts_with(word) {
            self.at += skip + word.len();
            true
        } else {
            false
        }
    }

    /// Up to four digits, after spaces.
    fn number(&mut self) -> Option<u32> {
        let rest = self.rest();
        let trimmed = rest.trim_start();
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 4 {
            return None;
        }
        self.at += rest.len() - trimmed.len() + digits;
        trimmed[..digits].parse().ok()
    }

    /// A count in digits or in Chinese numerals up to 99 (`3`, `两`, `十五`).
    fn count(&mut self) -> Option<u32> {
        self.attempt(Scan::number).or_else(|| {
            let value = |c: char| "零一二三四五六七八九".chars().position(|d| d == c).or((c == '两').then_some(2));
            let chars = self.rest().chars().take_while(|c| *c == '十' || value(*c).is_some());
            let (mut total, mut digit, mut len) = (0, None, 0);
            for c in chars {
                len += c.len_utf8();
                match (c, value(c)) {
                    ('十', _) => total += digit.take().unwrap_or(1) * 10,
                    (_, Some(d)) => digit = Some(d as u32),
                    _ => return None,
                }
            }
            let total = total + digit.unwrap_or(0);
            (len > 0 && total > 0).then(|| {
                self.at += len;
                total
            })
        })
    }

    /// `下午3点`, `上午10点半`, `早上8点`, `3点15分`, `15时`; a part of the day alone is at its
    /// usual hour.
    fn clock(&mut self) -> Option<Vec<String>> {
        let period = PERIODS.iter().find(|(word, _)| self.word(word)).map(|(_, p)| *p);
        match period {
            Some(period) => Some(vec![self.hour_in(period).unwrap_or_else(|| clock_word(period.default_hour, 0))]),
            None => self.attempt(|s| s.hour_said(None)).map(|clock| vec![clock]),
        }
    }

    /// The hour that may follow a part of the day: `3点`, `3:30`, `10点半`.
    fn hour_in(&mut self, period: Period) -> Option<String> {
        self.attempt(|s| s.hour_said(Some(period)))
    }

    /// `3点`, `3点半`, `3点15分`, `15时`, or after a part of the day also `3:30` and an hour in
    /// Chinese numerals (`下午三点`; alone, `一点` is also "a little").
    fn hour_said(&mut self, period: Option<Period>) -> Option<String> {
        let hour = match period {
            Some(_) => self.count(),
            None => self.number(),
        };
        let hour = hour.filter(|h| *h < 24)?;
        let colon = self.rest().starts_with(':');
        let minute = if colon {
            self.at += 1;
            let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
            let minute = self.rest()[..digits].parse().ok().filter(|m| digits == 2 && *m < 60)?;
            self.at += digits;
            self.word("点");
            minute
        } else if ["点", "點", "时"].iter().any(|unit| self.word(unit)) {
            self.minutes()
        } else {
            return None;
        };
        let hour = period.map_or(Some(hour), |p| p.hour(hour))?;
        Some(clock_word(hour, minute))
    }

    /// What may follow `点`: `半` (30), `15分` or `15` (15), `整` or `钟` (0).
    fn minutes(&mut self) -> u32 {
        if self.word("半") {
            return 30;
        }
        if self.word("整") || self.word("钟") {
            return 0;
        }
        self.attempt(|s| {
            let minute = s.number().filter(|m| *m < 60)?;
            s.word("分");
            Some(minute)
        })
        .unwrap_or(0)
    }
}
