//! Reminders said in Chinese, and the English prose forms read with them, one row per form,
//! from a fixed `now` in Asia/Shanghai.

use super::*;
use chrono::TimeZone;
use chrono_tz::Asia::Shanghai;

const MF: DateOrder = DateOrder::MonthFirst;

/// Wednesday 2026-05-13 10:00 UTC: 18:00 in Shanghai.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 13, 10, 0, 0).unwrap()
}

/// `2026-05-13T17:00Z`, `every 600s` or `cron 0 9 * * *`, then ` / ` and the reminder's text.
fn read(input: &str) -> String {
    let show = |when: When| match when {
        When::Once(at) => at.format("%Y-%m-%dT%H:%MZ").to_string(),
        When::Every(interval) => format!("every {}s", interval.num_seconds()),
        When::Cron { expr, tz } => format!("cron {expr} in {tz}"),
    };
    match (parse_when(input, now(), Shanghai, MF), split_when(input, now(), Shanghai, MF)) {
        (Ok(when), _) => show(when),
        (_, Ok((when, text))) => format!("{} / {text}", show(when)),
        (Err(e), _) => format!("error: {e}"),
    }
}

/// Input, and what it is read as (instants in UTC; Shanghai is 8 hours ahead).
const READ: &[(&str, &str)] = &[
    ("明天上午10点 交报告", "2026-05-14T02:00Z / 交报告"),
    ("下午3点 开会", "2026-05-14T07:00Z / 开会"),
    ("晚上8点", "2026-05-13T12:00Z"),
    ("上午10点半", "2026-05-14T02:30Z"),
    ("早上8点", "2026-05-14T00:00Z"),
    ("中午12点", "2026-05-14T04:00Z"),
    ("3点15分", "2026-05-13T19:15Z"),
    ("3小时后 喝水", "2026-05-13T13:00Z / 喝水"),
    ("半小时后", "2026-05-13T10:30Z"),
    ("10分钟后 关火", "2026-05-13T10:10Z / 关火"),
    ("今晚", "2026-05-13T12:00Z"),
    ("今晚9点 倒垃圾", "2026-05-13T13:00Z / 倒垃圾"),
    ("明晚", "2026-05-14T12:00Z"),
    ("后天", "2026-05-15T01:00Z"),
    ("周四", "2026-05-14T01:00Z"),
    ("星期四", "2026-05-14T01:00Z"),
    ("本周五", "2026-05-15T01:00Z"),
    ("下周三", "2026-05-20T01:00Z"),
    ("下周五", "2026-05-22T01:00Z"),
    ("下周三下午3点 牙医", "2026-05-20T07:00Z / 牙医"),
    ("12月20日 体检", "2026-12-20T01:00Z / 体检"),
    ("2027年1月5日", "2027-01-05T01:00Z"),
    ("每天早上8点 吃药", "cron 0 8 * * * in Asia/Shanghai / 吃药"),
    ("每周二 亲子作业", "cron 0 9 * * 2 in Asia/Shanghai / 亲子作业"),
    ("每月20号 付保姆工资", "cron 0 9 20 * * in Asia/Shanghai / 付保姆工资"),
    ("每月 20 号 付保姆工资", "cron 0 9 20 * * in Asia/Shanghai / 付保姆工资"),
    ("工作日", "cron 0 9 * * 1-5 in Asia/Shanghai"),
    ("每个工作日早上8点 打卡", "cron 0 8 * * 1-5 in Asia/Shanghai / 打卡"),
    ("每周一三五 跑步", "cron 0 9 * * 1,3,5 in Asia/Shanghai / 跑步"),
    ("十二月二十日", "2026-12-20T01:00Z"),
    ("下午三点 开会", "2026-05-14T07:00Z / 开会"),
    ("截止12月20日 交报告", "2026-12-20T01:00Z / 交报告"),
    ("周五前 交报告", "2026-05-15T01:00Z / 交报告"),
    ("周五下午3点前 交报告", "2026-05-15T07:00Z / 交报告"),
    ("due friday", "2026-05-15T01:00Z"),
    ("next wednesday at 3pm", "2026-05-20T07:00Z"),
    ("by friday", "2026-05-15T01:00Z"),
    ("by friday send the report", "2026-05-15T01:00Z / send the report"),
    ("the day after tomorrow", "2026-05-15T01:00Z"),
    ("wednesday next week at 3pm", "2026-05-20T07:00Z"),
    ("friday this week", "2026-05-15T01:00Z"),
    ("大后天 交房租", "2026-05-16T01:00Z / 交房租"),
    ("大后天下午3点 看牙医", "2026-05-16T07:00Z / 看牙医"),
    ("月底 交房租", "2026-05-31T01:00Z / 交房租"),
    ("下个月底", "2026-06-30T01:00Z"),
    ("下个月5号 体检", "2026-06-05T01:00Z / 体检"),
    ("12月底 年终总结", "2026-12-31T01:00Z / 年终总结"),
    ("3 days from today", "2026-05-16T01:00Z"),
    ("the end of the month", "2026-05-31T01:00Z"),
    ("end of next month", "2026-06-30T01:00Z"),
    ("the 5th of next month at 10am", "2026-06-05T02:00Z"),
];

#[test]
fn chinese_reminders_and_english_prose_forms_read_as_said() {
    let wrong: Vec<String> = READ
        .iter()
        .map(|(input, want)| (input, want, read(input)))
        .filter(|(_, want, got)| got != *want)
        .map(|(input, want, got)| format!("{input}: got {got}, want {want}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A day of this week already gone, and a recurrence a cron schedule cannot say, are refused.
#[test]
fn a_past_day_of_this_week_and_every_other_week_are_refused() {
    let saturday = Utc.with_ymd_and_hms(2026, 5, 16, 4, 0, 0).unwrap();
    let error = parse_when("本周五", saturday, Shanghai, MF).unwrap_err();
    assert!(matches!(error, TimeError::Past { .. }), "{error}");
    assert!(read("every other monday").starts_with("error:"));
    for every_other_week in ["隔周一", "每两周周一", "双周周一"] {
        assert!(read(every_other_week).starts_with("error:"), "{every_other_week}");
    }
}
