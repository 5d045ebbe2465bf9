//! `raven simulate`: the whole engine on a manual clock for days, against a scenario file,
//! so a change to the policy, the planner or the timers can be judged on a week of
//! behaviour in seconds. The output (a text report, the same as JSON, an SVG timeline)
//! depends only on the scenario and its seed: no wall-clock time, no temp path, no hash
//! order, so two runs give the same bytes and a diff shows what a change did.

pub(crate) mod capture;
pub mod drive;
pub(crate) mod events;
pub(crate) mod place;
pub(crate) mod report;
pub(crate) mod rng;
pub(crate) mod scenario;
pub(crate) mod svg;

pub use place::{Place, PlaceError};
pub use report::Report;
pub use scenario::{load, parse, Adjust, Plan};

use crate::data_dir::DataDir;
use std::path::{Path, PathBuf};

/// The rendered results of one run.
#[derive(Debug, Clone)]
pub struct Output {
    pub report: Report,
    pub text: String,
    pub json: String,
    pub svg: String,
}

/// Runs `plan` in a data dir of its own, made where `place` says (never a user's). Call it
/// on an actix arbiter.
// A `String` error: what `raven simulate` prints about its scenario, read by a person.
pub async fn simulate(plan: &Plan, place: &Place) -> Result<Output, String> {
    let workdir = place::Workdir::prepare(place).map_err(|e| e.to_string())?;
    let report = drive::run(plan, &DataDir::new(workdir.root()), None).await?;
    let config = drive::config_for(plan)?;
    let svg = svg::render(plan, &report, &drive::quiet_hours(plan, &config));
    Ok(Output { text: report.render(), json: report.to_json(), svg, report })
}

/// Writes `report.txt`, `report.json` and `timeline.svg` into `out`; answers their paths.
// A `String` error: what `raven simulate` prints about its scenario, read by a person.
pub fn write(output: &Output, out: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let files = [("report.txt", &output.text), ("report.json", &output.json), ("timeline.svg", &output.svg)];
    let mut written = Vec::new();
    for (name, text) in files {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod anticipation_tests;
#[cfg(test)]
mod tests;
