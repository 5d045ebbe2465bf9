//! `raven gateway`: the HTTP gateway of the data dir ([`raven_actors::gateway`]), asking the
//! supervisor over the control socket. Usually started, and restarted, by `raven up`.

use super::load_config;
use crate::error::CliError;
use raven_actors::data_dir::DataDir;
use raven_actors::gateway::{ControlSocket, Ended, Gateway, GatewayError};
use raven_actors::process::memory;
use std::sync::Arc;

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    let config = load_config(dir)?;
    dir.ensure_root().map_err(CliError::data_dir(dir.root()))?;
    let supervisor = Arc::new(ControlSocket::new(dir.socket()));
    let gateway = Gateway::open(dir, config, supervisor).map_err(cli_error)?;
    actix_rt::System::new().block_on(async move {
        // Exit code 3 (crate::error::CANNOT_LISTEN) when it cannot listen: its supervisor
        // tries again slowly.
        let listening = gateway.listen().await.map_err(cli_error)?;
        super::note(format!("raven gateway: listening on http://{}", listening.addr()));
        let _trim = actix_rt::spawn(memory::give_back_while_idle(memory::EVERY));
        match gateway.serve(listening).await.map_err(cli_error)? {
            Ended::Orphaned => {
                super::note("raven gateway: no supervisor for too long; exiting");
                std::process::exit(0);
            }
            Ended::Stopped => Ok(()),
        }
    })
}

fn cli_error(e: GatewayError) -> CliError {
    match e {
        GatewayError::CannotListen { listen, source } => CliError::CannotListen { listen, source },
        GatewayError::Io(e) => CliError::Io(e),
        GatewayError::Taps(e) => CliError::Taps(e),
        GatewayError::Outlets(e) => CliError::Engine(e),
    }
}
