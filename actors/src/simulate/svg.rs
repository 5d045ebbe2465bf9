//! The timeline as hand-written SVG: time runs left to right across the run, one lane per
//! source, a mark per event (its local time and label in a `<title>`), quiet hours shaded, a
//! line and a label at each local midnight, an hour axis (06, 12, 18) under the lanes, and a
//! legend: the quiet band, and a colour per policy layer for the denied marks. Coordinates are
//! printed with one decimal, so the same report always gives the same bytes.

use super::report::Report;
use super::scenario::Plan;
use crate::config::Window;
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::fmt::Write;

/// The lanes, top to bottom: (lane key, label, colour).
pub const LANES: [(&str, &str, &str); 8] = [
    ("sentinel", "Sentinel nudges", "#d9480f"),
    ("denied", "Denied nudges", "#868e96"),
    ("cron", "Cron fires", "#1971c2"),
    ("heartbeat", "Heartbeat", "#2f9e44"),
    ("user", "User messages", "#7048e8"),
    ("feedback", "Feedback", "#e8590c"),
    ("calendar", "Calendar", "#0c8599"),
    ("delivery", "Deliveries", "#343a40"),
];

const LEFT: f64 = 130.0;
const DAY_PX: f64 = 240.0;
const TOP: f64 = 30.0;
const LANE_PX: f64 = 28.0;
/// Room under the lanes for the hour axis and the legend.
const FOOT_PX: f64 = 56.0;

/// A colour per policy layer (1 to 12) for the denied marks.
pub(super) const LAYER_COLOURS: [&str; 12] = [
    "#495057", "#e03131", "#c2255c", "#9c36b5", "#6741d9", "#3b5bdb", "#1c7ed6", "#0c8599", "#099268", "#2f9e44",
    "#f08c00", "#e8590c",
];

/// The layer a denial's label names (`layer 10: …`).
fn layer_of(label: &str) -> Option<usize> {
    let rest = label.split("layer ").nth(1)?;
    let n: usize = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    (1..=12).contains(&n).then_some(n)
}

/// The quiet-hours spans of the run, clipped to it, in time order.
pub fn quiet_spans(plan: &Plan, quiet: &Window) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let local = |d: chrono::NaiveDate, t: chrono::NaiveTime| {
        plan.tz.from_local_datetime(&d.and_time(t)).earliest().map(|x| x.with_timezone(&Utc))
    };
    let (s, e) = (quiet.start.0, quiet.end.0);
    if s == e {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut d = plan.start.with_timezone(&plan.tz).date_naive() - Duration::days(1);
    let last = plan.end.with_timezone(&plan.tz).date_naive();
    while d <= last {
        let end_day = if e <= s { d + Duration::days(1) } else { d };
        if let (Some(a), Some(b)) = (local(d, s), local(end_day, e)) {
            let (a, b) = (a.max(plan.start), b.min(plan.end));
            if a < b {
                out.push((a, b));
            }
        }
        d += Duration::days(1);
    }
    out
}

/// A line and a label at each local midnight (and at the start), down to `bottom`.
fn midnights(out: &mut String, plan: &Plan, x: &dyn Fn(DateTime<Utc>) -> f64, bottom: f64) {
    let mut d = plan.start.with_timezone(&plan.tz).date_naive();
    let mut first = true;
    loop {
        let midnight = plan
            .tz
            .from_local_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default())
            .earliest()
            .map(|t| t.with_timezone(&Utc));
        let at = match midnight {
            Some(m) if first && m < plan.start => plan.start,
            Some(m) => m,
            None => plan.start,
        };
        if at >= plan.end {
            break;
        }
        let _ = writeln!(
            out,
            r##"<line class="day" x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#adb5bd"/><text class="day-label" x="{3:.1}" y="{4:.1}">{5}</text>"##,
            x(at),
            TOP - 4.0,
            bottom,
            x(at) + 3.0,
            TOP - 8.0,
            d.format("%a %Y-%m-%d"),
        );
        first = false;
        d += Duration::days(1);
    }
}

/// Ticks and labels at 06:00, 12:00 and 18:00 local each day, under the lanes at `y`.
fn hours(out: &mut String, plan: &Plan, x: &dyn Fn(DateTime<Utc>) -> f64, y: f64) {
    let mut d = plan.start.with_timezone(&plan.tz).date_naive();
    while let Some(day) = plan.tz.from_local_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default()).earliest() {
        if day.with_timezone(&Utc) >= plan.end {
            break;
        }
        for h in [6, 12, 18] {
            let Some(at) = plan.tz.from_local_datetime(&d.and_hms_opt(h, 0, 0).unwrap_or_default()).earliest() else {
                continue;
            };
            let at = at.with_timezone(&Utc);
            if at < plan.start || at >= plan.end {
                continue;
            }
            let _ = writeln!(
                out,
                r##"<line class="hour" x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#adb5bd"/><text class="hour-label" x="{0:.1}" y="{3:.1}" text-anchor="middle" fill="#868e96">{h:02}</text>"##,
                x(at),
                y,
                y + 4.0,
                y + 15.0,
            );
        }
        d += Duration::days(1);
    }
}

/// The legend under the axis: the quiet band, then a swatch per policy layer that denied.
fn legend(out: &mut String, report: &Report, quiet: &Window, y: f64) {
    let _ = writeln!(
        out,
        r##"<g class="legend"><rect x="{LEFT:.1}" y="{:.1}" width="14" height="10" fill="#dee2e6"/><text x="{:.1}" y="{y:.1}">quiet hours {quiet}</text>"##,
        y - 9.0,
        LEFT + 18.0,
    );
    let mut layers: Vec<usize> =
        report.marks.iter().filter(|m| m.lane == "denied").filter_map(|m| layer_of(&m.label)).collect();
    layers.sort_unstable();
    layers.dedup();
    for (i, n) in layers.iter().enumerate() {
        let lx = LEFT + 170.0 + 70.0 * i as f64;
        let _ = writeln!(
            out,
            r##"<circle cx="{lx:.1}" cy="{:.1}" r="4" fill="{}"/><text x="{:.1}" y="{y:.1}">layer {n}</text>"##,
            y - 4.0,
            LAYER_COLOURS[n - 1],
            lx + 7.0,
        );
    }
    let _ = writeln!(out, "</g>");
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn render(plan: &Plan, report: &Report, quiet: &Window) -> String {
    let minutes = (plan.end - plan.start).num_minutes().max(1) as f64;
    let width_px = DAY_PX * minutes / (24.0 * 60.0);
    let x = |t: DateTime<Utc>| LEFT + width_px * (t - plan.start).num_minutes() as f64 / minutes;
    let height = TOP + LANE_PX * LANES.len() as f64 + FOOT_PX;
    let width = LEFT + width_px + 20.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1}" height="{height:.1}" viewBox="0 0 {width:.1} {height:.1}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&format!("simulation {}", report.scenario)));
    let _ = writeln!(out, r##"<rect x="0" y="0" width="{width:.1}" height="{height:.1}" fill="#ffffff"/>"##);
    let body = LANE_PX * LANES.len() as f64;
    for (a, b) in quiet_spans(plan, quiet) {
        let _ = writeln!(
            out,
            r##"<rect class="quiet" x="{:.1}" y="{TOP:.1}" width="{:.1}" height="{body:.1}" fill="#dee2e6" fill-opacity="0.6"><title>quiet hours {} to {}</title></rect>"##,
            x(a),
            x(b) - x(a),
            a.with_timezone(&plan.tz).format("%Y-%m-%d %H:%M"),
            b.with_timezone(&plan.tz).format("%Y-%m-%d %H:%M"),
        );
    }
    midnights(&mut out, plan, &x, TOP + body);
    hours(&mut out, plan, &x, TOP + body);
    for (i, (key, label, colour)) in LANES.iter().enumerate() {
        let y = TOP + LANE_PX * (i as f64 + 0.5);
        let _ = writeln!(out, r#"<g class="lane" data-lane="{key}">"#);
        let _ = writeln!(out, r#"<text x="8" y="{:.1}">{label}</text>"#, y + 4.0);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e9ecef"/>"##,
            LEFT + width_px
        );
        for m in report.marks.iter().filter(|m| m.lane == *key) {
            let mx = LEFT + width_px * m.minute as f64 / minutes;
            let fill = match (*key, layer_of(&m.label)) {
                ("denied", Some(n)) => LAYER_COLOURS[n - 1],
                _ => colour,
            };
            let local = (plan.start + Duration::minutes(m.minute)).with_timezone(&plan.tz);
            let _ = writeln!(
                out,
                r#"<circle cx="{mx:.1}" cy="{y:.1}" r="3.5" fill="{fill}"><title>{} {}</title></circle>"#,
                local.format("%a %Y-%m-%d %H:%M %Z"),
                escape(&m.label)
            );
        }
        let _ = writeln!(out, "</g>");
    }
    legend(&mut out, report, quiet, TOP + body + 34.0);
    let _ = writeln!(out, "</svg>");
    out
}
