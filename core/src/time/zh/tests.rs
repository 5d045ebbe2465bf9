//! How Chinese text is cut into pieces, and the words each time piece stands for.

use super::*;

/// The words of each piece, joined by spaces; pieces joined by ` | `.
fn cut(input: &str) -> String {
    pieces(input).iter().map(|p| p.words.join(" ")).collect::<Vec<_>>().join(" | ")
}

const CUTS: &[(&str, &str)] = &[
    ("12月20日 体检", "dec 20 | 体检"),
    ("2026年12月20日", "dec 20 2026"),
    ("作业；12/15 运动会", "作业 | ； | 12/15 | 运动会"),
    ("（12/10）结婚纪念日", "（ | 12/10 | ） | 结婚纪念日"),
    ("下周三下午3点 牙医", "wednesday next week | 15:00 | 牙医"),
    ("本周五", "friday this week"),
    ("星期天", "sunday"),
    ("礼拜四", "thursday"),
    ("明天上午10点 交报告", "tomorrow | 10:00 | 交报告"),
    ("上午10点半", "10:30"),
    ("晚上8点", "20:00"),
    ("中午12点", "12:00"),
    ("3点15分", "03:15"),
    ("下午 3 点", "15:00"),
    ("今晚", "today 20:00"),
    ("明晚9点", "tomorrow 21:00"),
    ("后天", "day after tomorrow"),
    ("大后天 交房租", "3 days from today | 交房租"),
    ("月底 交房租", "end of the month | 交房租"),
    ("下个月底", "end of next month"),
    ("下个月5号 体检", "the 5 of next month | 体检"),
    ("下月20日", "the 20 of next month"),
    ("12月底 年终总结", "dec 31 | 年终总结"),
    ("3小时后 喝水", "in 180 minutes | 喝水"),
    ("半小时后", "in 30 minutes"),
    ("一个半小时后", "in 90 minutes"),
    ("两天后", "in 2 days"),
    ("每天早上8点 吃药", "every day | 08:00 | 吃药"),
    ("每周二 亲子作业", "every tuesday | 亲子作业"),
    ("每周一三五", "every monday wednesday friday"),
    ("每月20号 付保姆工资", "every month | the 20 | 付保姆工资"),
    ("每月 20 号", "every month | the 20"),
    ("每个工作日", "every weekday"),
    ("隔周一 倒垃圾", "every other monday | 倒垃圾"),
    ("隔周周一", "every other monday"),
    ("每两周一", "every other monday"),
    ("每两周周一", "every other monday"),
    ("每隔一周周一", "every other monday"),
    ("每两个星期一", "every other monday"),
    ("双周周一", "every other monday"),
    ("隔周二、四", "every other tuesday thursday"),
    ("每三周一 体检", "每三周一 | 体检"),
    ("每隔两周周一", "每隔两周周一"),
    ("每两周一次 打扫", "每两周一次 | 打扫"),
    ("每周一次", "每周一次"),
    ("从3月2日起隔周一", "from mar 2 | every other monday"),
    ("2026年3月2日开始", "from mar 2 2026"),
    ("周末 一个人", "周末 | 一个人"),
    ("Dentist at 3pm", "Dentist | at | 3pm"),
];

#[test]
fn chinese_time_words_stand_for_the_words_the_parser_knows() {
    let wrong: Vec<String> = CUTS
        .iter()
        .filter(|(input, want)| cut(input) != *want)
        .map(|(input, want)| format!("{input}: got {}, want {want}", cut(input)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn pieces_keep_where_they_are_written_and_whether_a_space_came_before() {
    let found = pieces("作业；12/15 运动会");
    let spans: Vec<(&str, usize, bool)> = found.iter().map(|p| (p.raw, p.start, p.glued)).collect();
    assert_eq!(spans, [("作业", 0, false), ("；", 6, true), ("12/15", 9, true), ("运动会", 15, false)]);
}

#[test]
fn odd_chinese_never_panics() {
    use super::super::{find_dates, parse_when, split_when, DateOrder};
    use chrono::{TimeZone, Utc};
    let fragments = "今天|明晚|后天|下周|下周三|本周|每周|每周一三五、|周|星期|工作日|每月|月|日|号|点|点半|分|时|小时后|\
        半|个|十|两|二十|下午|晚上|中午|凌晨|前|截止|（|）|；|，|、|：|0|00|12|24|31|99|9999|10000|1/2|12/10|2026年|:|:5|\
        🙂|é| |\t|every|tomorrow|3pm";
    let fragments: Vec<&str> = fragments.split('|').collect();
    let mut lines = Vec::new();
    for a in &fragments {
        for b in &fragments {
            lines.push(format!("{a}{b}"));
            lines.push(format!("{b}{a}{b} 事"));
        }
    }
    let edges = [
        Utc.with_ymd_and_hms(2026, 5, 13, 10, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(9999, 12, 31, 23, 0, 0).unwrap(),
        Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(),
    ];
    let text = lines.join("\n");
    let tz = chrono_tz::Asia::Shanghai;
    for now in edges {
        let _ = find_dates(&text, now, chrono_tz::Pacific::Apia, DateOrder::MonthFirst);
        for line in &lines {
            let _ = parse_when(line, now, tz, DateOrder::DayFirst);
            let _ = split_when(line, now, tz, DateOrder::MonthFirst);
        }
    }
}
