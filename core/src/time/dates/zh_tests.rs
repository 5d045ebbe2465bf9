//! Dates in notes written in Chinese, one row per form, from a fixed `now` in Asia/Shanghai.

use super::*;
use chrono::TimeZone;
use chrono_tz::Asia::Shanghai;

/// Wednesday 2026-05-13 10:00 UTC: 18:00 in Shanghai.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 13, 10, 0, 0).unwrap()
}

/// `title | kind | local date and time | recurrence`, or `none`.
fn read(line: &str, order: DateOrder) -> String {
    let found = find_dates(line, now(), Shanghai, order);
    match found.as_slice() {
        [] => "none".into(),
        [f] => {
            let at = f.at.with_timezone(&Shanghai).format("%Y-%m-%d %H:%M");
            let all_day = if f.all_day { " all day" } else { "" };
            let every = f.recurrence.as_deref().map_or(String::new(), |r| format!(" | {r}"));
            format!("{} | {:?} | {at}{all_day}{every}", f.title, f.kind)
        }
        more => format!("{} dates: {more:?}", more.len()),
    }
}

/// A line of notes, and what is read from it (Shanghai time; a date without a time is due at
/// 23:59 and is all day).
const READ: &[(&str, &str)] = &[
    ("12月20日 体检", "体检 | Event | 2026-12-20 23:59 all day"),
    ("月底 交房租", "交房租 | Event | 2026-05-31 23:59 all day"),
    ("大后天 家长会", "家长会 | Event | 2026-05-16 23:59 all day"),
    ("下个月5号 体检", "体检 | Event | 2026-06-05 23:59 all day"),
    ("12月底 年终总结", "年终总结 | Event | 2026-12-31 23:59 all day"),
    ("5月20日 面试", "面试 | Event | 2026-05-20 23:59 all day"),
    ("2027年1月5日 续签护照", "续签护照 | Event | 2027-01-05 23:59 all day"),
    ("12/15 运动会", "运动会 | Event | 2026-12-15 23:59 all day"),
    ("作业；12/15 运动会", "作业 运动会 | Event | 2026-12-15 23:59 all day"),
    ("（12/10）结婚纪念日", "结婚纪念日 | Event | 2026-12-10 23:59 all day"),
    ("12/10 结婚纪念日", "结婚纪念日 | Event | 2026-12-10 23:59 all day"),
    ("12月20日（周日）体检", "体检 | Event | 2026-12-20 23:59 all day"),
    ("周四 家长会", "家长会 | Event | 2026-05-14 23:59 all day"),
    ("星期四 家长会", "家长会 | Event | 2026-05-14 23:59 all day"),
    ("周三 开会", "开会 | Event | 2026-05-13 23:59 all day"),
    ("下周三 体检", "体检 | Event | 2026-05-20 23:59 all day"),
    ("本周五 交作业", "交作业 | Event | 2026-05-15 23:59 all day"),
    ("周四下午3点 家长会", "家长会 | Event | 2026-05-14 15:00"),
    ("周五上午10点半 面试", "面试 | Event | 2026-05-15 10:30"),
    ("周五晚上8点 聚餐", "聚餐 | Event | 2026-05-15 20:00"),
    ("周六早上8点 爬山", "爬山 | Event | 2026-05-16 08:00"),
    ("周日中午12点 午饭", "午饭 | Event | 2026-05-17 12:00"),
    ("12月20日 3点15分 体检", "体检 | Event | 2026-12-20 03:15"),
    ("下周三下午3点 牙医", "牙医 | Event | 2026-05-20 15:00"),
    ("明天上午10点 交报告", "交报告 | Event | 2026-05-14 10:00"),
    ("- [ ] 明天上午10点 交报告", "交报告 | Deadline | 2026-05-14 10:00"),
    ("十二月二十日 体检", "体检 | Event | 2026-12-20 23:59 all day"),
    ("周日晚上八点 家庭会议", "家庭会议 | Event | 2026-05-17 20:00"),
    ("截止12月20日 交报告", "交报告 | Deadline | 2026-12-20 23:59 all day"),
    ("周五前 交作业", "交作业 | Deadline | 2026-05-15 23:59 all day"),
    ("周五下午3点前 交作业", "交作业 | Deadline | 2026-05-15 15:00"),
    ("后天 交房租", "交房租 | Event | 2026-05-15 23:59 all day"),
    ("今晚 倒垃圾", "倒垃圾 | Event | 2026-05-13 20:00"),
    ("明晚 看电影", "看电影 | Event | 2026-05-14 20:00"),
    ("每周二 亲子作业", "亲子作业 | Duty | 2026-05-12 23:59 all day | 59 23 * * 2"),
    ("每月20号 付保姆工资", "付保姆工资 | Duty | 2026-05-20 23:59 all day | 59 23 20 * *"),
    ("每月 20 号 付保姆工资", "付保姆工资 | Duty | 2026-05-20 23:59 all day | 59 23 20 * *"),
    ("每天早上8点 吃药", "吃药 | Duty | 2026-05-07 08:00 | 0 8 * * *"),
    ("工作日 送孩子上学", "送孩子上学 | Duty | 2026-05-06 23:59 all day | 59 23 * * 1-5"),
    ("每个工作日早上7点半 送孩子", "送孩子 | Duty | 2026-05-07 07:30 | 30 7 * * 1-5"),
    ("每周一三五 跑步", "跑步 | Duty | 2026-05-06 23:59 all day | 59 23 * * 1,3,5"),
    ("隔周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("隔周周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("每两周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("每两周周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("每隔一周周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("双周周一 倒垃圾", "倒垃圾 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 1970-01-05"),
    ("隔周一上午9点 游泳", "游泳 | Duty | 2026-05-11 09:00 | 0 9 * * 1 every 2 weeks from 1970-01-05"),
    ("从3月2日起隔周一 游泳", "游泳 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 2026-03-02"),
    ("从5月4日起隔周一 游泳", "游泳 | Duty | 2026-05-18 23:59 all day | 59 23 * * 1 every 2 weeks from 2026-05-04"),
    ("从5月6日起隔周一 游泳", "游泳 | Duty | 2026-05-11 23:59 all day | 59 23 * * 1 every 2 weeks from 2026-05-11"),
    (
        "游泳 隔周一 2026年5月4日开始",
        "游泳 | Duty | 2026-05-18 23:59 all day | 59 23 * * 1 every 2 weeks from 2026-05-04",
    ),
    ("从5月4日起 放假", "放假 | Event | 2027-05-04 23:59 all day"),
    ("12月20日（周一）体检", "none"),
    ("隔周一 12月20日 体检", "none"),
    ("每三周一 体检", "none"),
    ("每两周一次 打扫", "none"),
    ("每周一次 打扫", "none"),
    ("3/4 的预算", "none"),
    ("1/2杯 面粉", "none"),
    ("晚饭吃什么", "none"),
    ("有一点累", "none"),
    ("Dentist tomorrow at 3pm", "none"),
];

#[test]
fn chinese_dates_times_and_recurrences_in_notes() {
    let wrong: Vec<String> = READ
        .iter()
        .map(|(line, want)| (line, want, read(line, DateOrder::MonthFirst)))
        .filter(|(_, want, got)| got != *want)
        .map(|(line, want, got)| format!("{line}: got {got}, want {want}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `3/4` beside Chinese is a date, read in the user's order.
#[test]
fn an_ambiguous_numeric_date_beside_chinese_follows_the_date_order() {
    assert_eq!(read("3/4 考试", DateOrder::MonthFirst), "考试 | Event | 2027-03-04 23:59 all day");
    assert_eq!(read("3/4 考试", DateOrder::DayFirst), "考试 | Event | 2027-04-03 23:59 all day");
}

/// The preferences sections say caps and windows, not plans: `每天最多：4条` under `## 提醒偏好`
/// is no daily duty, and neither is a line of `## Proactivity preferences`; the next section is
/// read again.
#[test]
fn the_preferences_sections_are_not_read_for_dates() {
    let notes = "## 提醒偏好\n- 每天最多：4条\n## Proactivity preferences\n- max per day: every day 3\n\
                 ## 要记的事\n每天 吃药\n";
    let found = find_dates(notes, now(), Shanghai, DateOrder::MonthFirst);
    let titles: Vec<&str> = found.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(titles, ["吃药"]);
    assert_eq!(found[0].line, 6);
}
