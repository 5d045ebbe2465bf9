//! `raven simulate SCENARIO`: the whole engine on a manual clock for days, against a scenario
//! file; writes `report.txt`, `report.json` and `timeline.svg` and prints the report. The
//! data dir is a fresh private one unless `--data-dir` is given, so the user's own is never
//! touched by accident.

use raven_actors::simulate::{self, Adjust};
use std::path::{Path, PathBuf};

pub fn run(
    data_dir: Option<&Path>,
    scenario: PathBuf,
    out: PathBuf,
    days: Option<u32>,
    seed: Option<u64>,
) -> Result<(), String> {
    let plan = simulate::load(&scenario, Adjust { days, seed })?;
    let output = actix_rt::System::new().block_on(simulate::simulate(&plan, data_dir))?;
    let written = simulate::write(&output, &out)?;
    print!("{}", output.text);
    println!();
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(())
}
