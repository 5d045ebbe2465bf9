//! `raven up`: the supervisor. It hosts the engine (every actor, supervised), its loops and
//! the control socket, until SIGINT or SIGTERM: then it stops ticking, closes the socket and
//! exits 0. (Spawning and restarting `raven gateway` comes with the gateway.)

use super::load_config;
use raven_actors::clock::SystemClock;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::{Engine, EngineControl};
use raven_actors::ipc::{bind, serve, IpcError};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

pub fn run(dir: &DataDir) -> Result<(), String> {
    let started = Instant::now();
    let config = load_config(dir)?;
    dir.ensure().map_err(|e| format!("data dir {}: {e}", dir.root().display()))?;
    let socket = dir.socket();
    actix_rt::System::new().block_on(async move {
        let listener = bind(&socket).await.map_err(|e| match e {
            IpcError::AlreadyRunning { .. } => e.to_string(),
            other => format!("cannot open the control socket: {other}"),
        })?;
        let engine = Engine::start(dir, &config, Arc::new(SystemClock))?;
        let loops = engine.spawn_loops(&config);
        let server = actix_rt::spawn(serve(listener, Rc::new(EngineControl::of(&engine))));
        tracing::info!(socket = %socket.display(), provider = %engine.provider_name, "ready in {:?}", started.elapsed());
        eprintln!("raven: ready on {} (pid {})", socket.display(), std::process::id());
        wait_for_signal().await;
        eprintln!("raven: stopping");
        server.abort();
        for l in loops {
            l.abort();
        }
        // State is written through on every change; closing the socket is what is left.
        let _ = std::fs::remove_file(&socket);
        Ok(())
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut int), Ok(mut term)) => {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
