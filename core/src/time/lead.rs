//! An explicit lead in a note: how long before its date the user wants to hear of it. English
//! `a week before`, `3 days ahead`, `two weeks in advance`, `the day before`, `2 hours early`;
//! Chinese `提前一周`, `提前3天`, `提前两个星期`, `提前一个月`, `前一天`, `前两天`. A month is 30
//! days; a lead over [`MAX_LEAD`] is taken as that.

use chrono::Duration;

/// The longest lead kept (a heads-up two months ahead is already early).
pub const MAX_LEAD: Duration = Duration::days(60);

/// The lead `text` asks for, if it says one.
pub fn lead_in(text: &str) -> Option<Duration> {
    english(&text.to_lowercase()).or_else(|| chinese(text)).map(|d| d.min(MAX_LEAD))
}

/// `title` without the words that ask for a lead (`a week before`, `3 days ahead`, `提前一周`,
/// `前一天`): what is left says what to do (`Mum's birthday, order flowers`, `结婚纪念日 订餐厅`).
/// A title that is nothing but the lead is kept as it is.
pub fn without_lead(title: &str) -> String {
    let cut = english_span(title).or_else(|| chinese_span(title));
    let Some((start, end)) = cut else { return title.to_owned() };
    let (left, right) = (&title[..start], &title[end..]);
    // A space where the text had one beside the words cut (none between two Chinese words).
    let gap = left.ends_with(char::is_whitespace) || right.starts_with(char::is_whitespace);
    let rest = format!("{}{}{}", left.trim_end(), if gap { " " } else { "" }, right.trim_start());
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let rest =
        rest.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-' | '，' | '；' | '：'));
    let rest = rest.replace(" ,", ",").replace(",,", ",");
    if rest.is_empty() {
        title.to_owned()
    } else {
        rest
    }
}

/// Where the English lead phrase is in `text` (bytes), as [`english`] reads it.
fn english_span(text: &str) -> Option<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let words: Vec<(usize, &str)> = lower
        .match_indices(|c: char| c.is_alphanumeric())
        .fold(Vec::<(usize, usize)>::new(), |mut spans, (i, c)| {
            match spans.last_mut() {
                Some(last) if last.1 == i => last.1 = i + c.len(),
                _ => spans.push((i, i + c.len())),
            }
            spans
        })
        .into_iter()
        .map(|(a, b)| (a, &lower[a..b]))
        .collect();
    (0..words.len().saturating_sub(2)).find_map(|i| {
        // `in advance` is four words.
        let last = if words[i + 2].1 == "in" { words.get(i + 3).filter(|w| w.1 == "advance")? } else { &words[i + 2] };
        let phrase = match words[i + 2].1 {
            "in" => format!("{} {} in {}", words[i].1, words[i + 1].1, last.1),
            _ => format!("{} {} {}", words[i].1, words[i + 1].1, last.1),
        };
        english(&phrase)?;
        Some((words[i].0, last.0 + last.1.len()))
    })
}

/// Where the Chinese lead phrase is in `text` (bytes), as [`chinese`] reads it.
fn chinese_span(text: &str) -> Option<(usize, usize)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    (0..chars.len()).find_map(|at| {
        let from = chars[at].0;
        // The shortest phrase from here that reads as a lead: `提前一周`, `前一天`.
        (at + 2..=chars.len().min(at + 7)).find_map(|to| {
            let end = chars.get(to).map_or(text.len(), |c| c.0);
            let phrase = &text[from..end];
            let starts =
                phrase.starts_with("提前") || (phrase.starts_with('前') && (at == 0 || chars[at - 1].1 != '提'));
            (starts && chinese(phrase).is_some()).then_some((from, end))
        })
    })
}

/// `<n> <unit> before|ahead|in advance|early|earlier`, or `the day before`.
fn english(text: &str) -> Option<Duration> {
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words.windows(3).find_map(|w| {
        let [count, unit, after] = w else { return None };
        let ahead = matches!(*after, "before" | "ahead" | "in" | "early" | "earlier" | "prior");
        if !ahead || (*after == "in" && !words.join(" ").contains("in advance")) {
            return None;
        }
        let n = match *count {
            "a" | "an" | "one" | "the" => 1,
            c => small_number(c)?,
        };
        if *count == "the" && *unit != "day" {
            return None;
        }
        span(unit.trim_end_matches('s'), n)
    })
}

fn small_number(word: &str) -> Option<i64> {
    const WORDS: [&str; 10] = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
    word.parse().ok().or_else(|| WORDS.iter().position(|w| *w == word).map(|n| n as i64)).filter(|n| *n > 0)
}

fn span(unit: &str, n: i64) -> Option<Duration> {
    match unit {
        "hour" | "hr" | "h" => Some(Duration::hours(n)),
        "day" | "d" => Some(Duration::days(n)),
        "week" | "wk" | "w" => Some(Duration::weeks(n)),
        "month" => Some(Duration::days(30 * n)),
        _ => None,
    }
}

/// `提前<n><unit>` or `前<n>天`.
fn chinese(text: &str) -> Option<Duration> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).find_map(|at| {
        let (rest, ahead) = match chars[at] {
            '提' if chars.get(at + 1) == Some(&'前') => (&chars[at + 2..], true),
            // `前一天`, not the `前` of `周五前` (a deadline) nor of `提前`.
            '前' if at == 0 || chars[at - 1] != '提' => (&chars[at + 1..], false),
            _ => return None,
        };
        let (n, used) = zh_number(rest)?;
        let unit: String = rest[used..].iter().take(3).collect();
        let unit = unit.strip_prefix('个').unwrap_or(&unit);
        let day = unit.starts_with('天') || unit.starts_with('日');
        match () {
            _ if day => Some(Duration::days(n)),
            _ if !ahead => None,
            _ if unit.starts_with('周') || unit.starts_with("星期") || unit.starts_with("礼拜") => {
                Some(Duration::weeks(n))
            }
            _ if unit.starts_with('月') => Some(Duration::days(30 * n)),
            _ if unit.starts_with("小时") || unit.starts_with("钟头") => Some(Duration::hours(n)),
            _ => None,
        }
    })
}

/// A count at the start of `chars`: digits, or 一 to 十九 (两 for two); how many chars it took.
fn zh_number(chars: &[char]) -> Option<(i64, usize)> {
    let digits: String = chars.iter().take_while(|c| c.is_ascii_digit()).collect();
    if !digits.is_empty() {
        return digits.parse().ok().filter(|n| *n > 0).map(|n| (n, digits.chars().count()));
    }
    let digit = |c: &char| {
        "一二三四五六七八九".chars().position(|d| d == *c).map(|p| p as i64 + 1).or((*c == '两').then_some(2))
    };
    match (chars.first(), chars.get(1)) {
        (Some('十'), Some(c)) if digit(c).is_some() => Some((10 + digit(c)?, 2)),
        (Some('十'), _) => Some((10, 1)),
        (Some(c), Some('十')) => Some((digit(c)? * 10, 2)),
        (Some(c), _) => digit(c).map(|n| (n, 1)),
        (None, _) => None,
    }
}

/// A lead as whole seconds in JSON (`lead_s`).
pub(super) mod seconds {
    use chrono::Duration;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(lead: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match lead {
            Some(d) => s.serialize_some(&d.num_seconds()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(Duration::seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_words_leave_the_title() {
        let cases = [
            ("Mum's birthday, order flowers 3 days ahead", "Mum's birthday, order flowers"),
            ("Leo's school play costume needed a week before", "Leo's school play costume needed"),
            ("Book the table two weeks in advance for the anniversary", "Book the table for the anniversary"),
            ("Flight to Lisbon, pack the day before", "Flight to Lisbon, pack"),
            ("结婚纪念日 提前一周订餐厅", "结婚纪念日 订餐厅"),
            ("小宝 三岁体检，带疫苗本，前一天准备", "小宝 三岁体检，带疫苗本，准备"),
            ("妈妈生日 提前一周买礼物", "妈妈生日 买礼物"),
            ("Dentist", "Dentist"),
            ("a week before", "a week before"),
        ];
        for (title, want) in cases {
            assert_eq!(without_lead(title), want, "{title}");
        }
    }

    #[test]
    fn each_way_of_saying_a_lead_reads_as_said() {
        let days = Duration::days;
        let cases = [
            ("Anniversary 12/10, book the restaurant a week before", Some(days(7))),
            ("Sports day 12/15: outfit 3 days ahead", Some(days(3))),
            ("Pay the nanny on the 20th of every month, two days in advance", Some(days(2))),
            ("Check-up on May 20, papers the day before", Some(days(1))),
            ("Flight Friday 7am, leave 2 hours early", Some(Duration::hours(2))),
            ("Visa appointment June 3, a month before get the photos", Some(days(30))),
            ("12/10 结婚纪念日 提前一周订餐厅", Some(days(7))),
            ("12月20日 体检，提前3天准备材料", Some(days(3))),
            ("运动会 12/15 提前两个星期买衣服", Some(days(14))),
            ("签证 6月3日 提前一个月", Some(days(30))),
            ("体检前一天不要吃晚饭 12月20日", Some(days(1))),
            ("每月20号付保姆工资，前两天取钱", Some(days(2))),
            ("交报告 周五前", None),
            ("Dentist on May 15 at 3pm", None),
            ("the day after the party", None),
            ("Renew the passport a year before it expires", None),
            ("Leave in advance of nothing", None),
            ("提前", None),
            ("我提前到了", None),
        ];
        for (text, want) in cases {
            assert_eq!(lead_in(text), want, "{text}");
        }
        assert_eq!(lead_in("the conference, six months ahead"), Some(MAX_LEAD), "kept within two months");
    }
}
