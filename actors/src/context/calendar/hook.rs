//! The calendar as the ContextAssembler's hook: the configured files' events that have not
//! started yet, within the horizon, as the Planner's calendar entries (each with its notice:
//! its own alarm, else `notice_minutes`). A bad file is reported by `CalendarSources` and the
//! other files keep working; the assembler never fails on a calendar.

use super::CalendarSources;
use crate::config::CalendarConfig;
use crate::context::assembler::CalendarFn;
use chrono::Duration;
use chrono_tz::Tz;
use raven_proto::CalendarEntry;
use std::cell::RefCell;
use std::path::Path;

/// The hook over `cfg.paths` (relative ones under `root`).
pub fn calendar_hook(root: &Path, cfg: &CalendarConfig, tz: Tz) -> CalendarFn {
    let paths = cfg.paths.iter().map(|p| root.join(p)).collect();
    let sources = RefCell::new(CalendarSources::new(paths));
    let (notice, horizon) = (cfg.notice_minutes, Duration::days(cfg.horizon_days.max(1)));
    Box::new(move |now| {
        let (events, _errors) = sources.borrow_mut().events(tz, now, now + horizon);
        Ok(events
            .into_iter()
            .map(|e| CalendarEntry {
                title: e.title,
                starts_at: e.start,
                ends_at: e.end,
                all_day: e.all_day,
                notice_minutes: Some(e.notice.map_or(notice, |n| n.num_minutes())),
            })
            .collect())
    })
}
