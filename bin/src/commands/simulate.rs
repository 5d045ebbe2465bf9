//! `raven simulate SCENARIO`: the whole engine on a manual clock for days, against a scenario
//! file; writes `report.txt`, `report.json` and `timeline.svg` and prints the report. It
//! always runs in a data dir of its own, a private temp dir removed afterwards, or with
//! `--keep-data` `<out>/data`, made fresh each run and kept to inspect. A real data dir is
//! never touched: `--data-dir` is refused, and `RAVEN_HOME` (often set for good in a shell)
//! is ignored, with a note saying so. The scenario is only read.

use crate::error::CliError;
use clap::Args;
use raven_actors::simulate::{self, Adjust, Place};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct SimulateArgs {
    /// The scenario (TOML), e.g. scenarios/week.toml. Only read.
    scenario: PathBuf,
    /// Where report.txt, report.json and timeline.svg go.
    #[arg(long, value_name = "DIR", default_value = "simulation")]
    out: PathBuf,
    /// Simulate this many days instead of the scenario's.
    #[arg(long)]
    days: Option<u32>,
    /// Use this seed instead of the scenario's.
    #[arg(long)]
    seed: Option<u64>,
    /// Keep the simulation's own data dir in `<out>/data` to inspect it (made fresh each run).
    #[arg(long)]
    keep_data: bool,
}

/// Why a simulation will not start: it would be pointed at a real data dir.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(
        "simulate never touches a real data dir, so --data-dir is refused; it runs in a data dir \
         of its own (use --keep-data to inspect it in <out>/data)"
    )]
    DataDirFlag,
}

/// Refuses a data dir named by the flag; says that `RAVEN_HOME` is ignored.
pub fn refuse_real_data_dir(data_dir: Option<&Path>) -> Result<(), Refused> {
    if data_dir.is_some() {
        return Err(Refused::DataDirFlag);
    }
    if std::env::var_os("RAVEN_HOME").is_some_and(|v| !v.is_empty()) {
        super::note(
            "raven: RAVEN_HOME is ignored: simulate never touches a real data dir and runs in one of its own \
             (--keep-data keeps it in <out>/data)",
        );
    }
    Ok(())
}

pub fn run(data_dir: Option<&Path>, args: SimulateArgs) -> Result<(), CliError> {
    refuse_real_data_dir(data_dir)?;
    let plan =
        simulate::load(&args.scenario, Adjust { days: args.days, seed: args.seed }).map_err(CliError::simulation)?;
    let place = match args.keep_data {
        true => Place::Kept(args.out.join("data")),
        false => Place::Temporary,
    };
    let output = actix_rt::System::new().block_on(simulate::simulate(&plan, &place)).map_err(CliError::simulation)?;
    let written = simulate::write(&output, &args.out).map_err(CliError::simulation)?;
    print!("{}", output.text);
    println!();
    for p in written {
        println!("wrote {}", p.display());
    }
    if let Place::Kept(data) = place {
        println!("kept  {} (the simulation's data dir)", data.display());
    }
    Ok(())
}
