//! A file's events as written, independent of the user's zone and of any window: what is
//! cached per file. Every `VEVENT` anywhere under the `VCALENDAR` becomes an [`EventSpec`];
//! anything in one that cannot be read makes the whole file an error naming its line.

use crate::context::calendar::lines::{self, ComponentLines};
use crate::context::calendar::values::{parse_bare, parse_duration, parse_when, Dur, Origin, ValueError, When};
use crate::context::calendar::{Bad, CalendarError};
use chrono::Duration;
use icalendar::parser::{Component, Property};
use rrule::{RRule, Unvalidated};
use std::path::Path;

/// A parsed file.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ParsedCalendar {
    pub(super) events: Vec<EventSpec>,
}

/// How long an event lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Length {
    /// `DTEND`.
    Until(When),
    /// `DURATION`.
    For(Dur),
}

/// When an alarm rings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// Offset from the start (negative: before).
    Start(Duration),
    /// Offset from the end (`RELATED=END`).
    End(Duration),
    /// A fixed moment (`VALUE=DATE-TIME`).
    At(When),
}

/// `RRULE`, its `UNTIL` kept apart: the rule crate would read a floating `UNTIL` in the
/// machine's zone, and wants it in UTC besides.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Rule {
    pub(super) rule: RRule<Unvalidated>,
    pub(super) until: Option<When>,
}

/// One `VEVENT`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct EventSpec {
    pub(super) uid: String,
    /// `SUMMARY`, trimmed; `None` when missing or blank.
    pub(super) title: Option<String>,
    pub(super) location: Option<String>,
    /// `STATUS:CANCELLED`.
    pub(super) cancelled: bool,
    pub(super) start: When,
    pub(super) length: Option<Length>,
    pub(super) rule: Option<Rule>,
    pub(super) rdates: Vec<When>,
    pub(super) exdates: Vec<When>,
    /// Set on an override: the start of the occurrence it replaces.
    pub(super) recurrence_id: Option<When>,
    /// One per `VALARM` with a `TRIGGER`, in order.
    pub(super) alarms: Vec<Trigger>,
}

/// Parses one file's text; the error names the file and the offending line.
pub(super) fn parse(text: &str, path: &Path) -> Result<ParsedCalendar, CalendarError> {
    let scanned = lines::scan(text).map_err(|bad| bad.at(path))?;
    let roots = icalendar::parser::read_calendar_simple(&scanned.unfolded).map_err(|e| {
        // The parser's error holds the rest of the input from where it stopped.
        let offset = scanned.unfolded.len().saturating_sub(e.input.len());
        Bad::new(scanned.line_at(offset), "this line cannot be read as iCalendar").at(path)
    })?;
    let mut events = Vec::new();
    let mut index = 0;
    for root in &roots {
        walk(root, &mut index, &scanned.components, path, &mut events).map_err(|bad| bad.at(path))?;
    }
    Ok(ParsedCalendar { events })
}

/// For a component the line scan did not see (it always does).
static NOWHERE: ComponentLines = ComponentLines { begin: 1, props: Vec::new() };

/// Visits `component` (the `index`th in document order) and everything under it.
fn walk(
    component: &Component<'_>,
    index: &mut usize,
    lines: &[ComponentLines],
    path: &Path,
    out: &mut Vec<EventSpec>,
) -> Result<(), Bad> {
    let here = lines.get(*index).unwrap_or(&NOWHERE);
    *index += 1;
    if !component.name.as_str().eq_ignore_ascii_case("VEVENT") {
        for child in &component.components {
            walk(child, index, lines, path, out)?;
        }
        return Ok(());
    }
    let mut alarms = Vec::new();
    for child in &component.components {
        let child_lines = lines.get(*index).unwrap_or(&NOWHERE);
        if child.name.as_str().eq_ignore_ascii_case("VALARM") {
            alarms.extend(trigger(child, child_lines, path)?);
        }
        *index += size(child);
    }
    out.push(event(component, here, alarms, path)?);
    Ok(())
}

/// How many components `component` is, itself included.
fn size(component: &Component<'_>) -> usize {
    1 + component.components.iter().map(size).sum::<usize>()
}

fn event(
    component: &Component<'_>,
    lines: &ComponentLines,
    alarms: Vec<Trigger>,
    path: &Path,
) -> Result<EventSpec, Bad> {
    let mut uid = None;
    let mut spec = EventSpec {
        uid: String::new(),
        title: None,
        location: None,
        cancelled: false,
        start: When::Date(chrono::NaiveDate::MIN),
        length: None,
        rule: None,
        rdates: Vec::new(),
        exdates: Vec::new(),
        recurrence_id: None,
        alarms,
    };
    let (mut start, mut end, mut duration, mut rule_line) = (None, None, None, 0);
    for (i, prop) in component.properties.iter().enumerate() {
        let line = lines.prop(i);
        let origin = Origin { path, line };
        let bad = |e: ValueError| Bad::new(line, e.to_string());
        match prop.name.as_str().to_ascii_uppercase().as_str() {
            "UID" => uid = non_blank(prop),
            "SUMMARY" => spec.title = non_blank(prop),
            "LOCATION" => spec.location = non_blank(prop),
            "STATUS" => spec.cancelled = prop.val.as_str().trim().eq_ignore_ascii_case("CANCELLED"),
            "DTSTART" => start = Some(parse_when(prop, prop.val.as_str(), origin).map_err(bad)?),
            "DTEND" => end = Some(parse_when(prop, prop.val.as_str(), origin).map_err(bad)?),
            "DURATION" => {
                let value = prop.val.as_str();
                duration = Some(
                    parse_duration(value).ok_or_else(|| Bad::new(line, format!("unreadable DURATION {value:?}")))?,
                );
            }
            "RECURRENCE-ID" => spec.recurrence_id = Some(parse_when(prop, prop.val.as_str(), origin).map_err(bad)?),
            "RRULE" if spec.rule.is_none() => {
                spec.rule = Some(rule(prop.val.as_str()).map_err(bad)?);
                rule_line = line;
            }
            "RDATE" => spec.rdates.extend(list(prop, origin).map_err(bad)?),
            "EXDATE" => spec.exdates.extend(list(prop, origin).map_err(bad)?),
            _ => {}
        }
    }
    spec.start = start.ok_or_else(|| Bad::new(lines.begin, "VEVENT without a DTSTART"))?;
    spec.length = end.map(Length::Until).or(duration.map(Length::For));
    spec.uid = uid.unwrap_or_else(|| format!("(no UID, line {})", lines.begin));
    if let Some(rule) = &spec.rule {
        // The rule's own checks (ranges of BYxxx and the like), here so they fail the file once.
        let probe = spec.start.instant(chrono_tz::UTC).with_timezone(&rrule::Tz::UTC);
        rule.rule.clone().validate(probe).map_err(|e| Bad::new(rule_line, format!("invalid RRULE: {e}")))?;
    }
    Ok(spec)
}

/// A text value, unescaped and trimmed; `None` when blank.
fn non_blank(prop: &Property<'_>) -> Option<String> {
    // The parser unescapes the values of properties it knows by their upper-case names only.
    let upper = prop.name.as_str().bytes().all(|b| !b.is_ascii_lowercase());
    let value = if upper { prop.val.clone() } else { prop.val.clone().unescape_text() };
    Some(value.as_str().trim().to_owned()).filter(|v| !v.is_empty())
}

/// The dates of an `RDATE` or `EXDATE` list (a period counting by its start).
fn list(prop: &Property<'_>, origin: Origin<'_>) -> Result<Vec<When>, ValueError> {
    let items = prop.val.as_str().split(',').filter(|item| !item.trim().is_empty());
    items.map(|item| parse_when(prop, item.split('/').next().unwrap_or(item), origin)).collect()
}

/// An `RRULE` value: `UNTIL` taken out, `X-` parts dropped, the rest for the rule crate.
fn rule(value: &str) -> Result<Rule, ValueError> {
    let mut until = None;
    let mut kept = Vec::new();
    for part in value.split(';').map(str::trim).filter(|part| !part.is_empty()) {
        let key = part.split('=').next().unwrap_or(part).to_ascii_uppercase();
        if key == "UNTIL" {
            let raw = part.split_once('=').map_or("", |(_, v)| v);
            until = Some(parse_bare(raw).ok_or_else(|| ValueError::Until(raw.to_owned()))?);
        } else if !key.starts_with("X-") {
            kept.push(part);
        }
    }
    let rule = kept
        .join(";")
        .parse::<RRule<Unvalidated>>()
        .map_err(|e| ValueError::Rule { value: value.to_owned(), reason: e.to_string() })?;
    Ok(Rule { rule, until })
}

/// The `TRIGGER` of a `VALARM` (`None` when it has none).
fn trigger(alarm: &Component<'_>, lines: &ComponentLines, path: &Path) -> Result<Option<Trigger>, Bad> {
    let Some((i, prop)) =
        alarm.properties.iter().enumerate().find(|(_, p)| p.name.as_str().eq_ignore_ascii_case("TRIGGER"))
    else {
        return Ok(None);
    };
    let line = lines.prop(i);
    let param =
        |key: &str| prop.params.iter().find(|p| p.key.as_str().eq_ignore_ascii_case(key)).and_then(|p| p.val.as_ref());
    let value = prop.val.as_str();
    if param("VALUE").is_some_and(|v| v.as_str().eq_ignore_ascii_case("DATE-TIME")) {
        let at = parse_when(prop, value, Origin { path, line }).map_err(|e| Bad::new(line, e.to_string()))?;
        return Ok(Some(Trigger::At(at)));
    }
    if let Some(offset) = parse_duration(value) {
        let related_end = param("RELATED").is_some_and(|v| v.as_str().eq_ignore_ascii_case("END"));
        let offset = offset.exact();
        return Ok(Some(if related_end { Trigger::End(offset) } else { Trigger::Start(offset) }));
    }
    // A date-time written without its VALUE=DATE-TIME.
    parse_bare(value)
        .map(|at| Some(Trigger::At(at)))
        .ok_or_else(|| Bad::new(line, format!("unreadable TRIGGER {value:?}")))
}
