//! `raven up`: the supervisor. It hosts the engine (every actor, supervised), its loops and
//! the control socket, until SIGINT or SIGTERM: then it stops ticking, closes the socket and
//! exits 0. It starts `raven gateway` as a child and restarts it with backoff when it dies
//! ([`raven_actors::process`]); with the gateway on, the outlets that face the outside (jsonl,
//! webhook) are the gateway's.

use crate::error::CliError;
use raven_actors::clock::SystemClock;
use raven_actors::data_dir::DataDir;
use raven_actors::engine::{hosted_channels, Engine, EngineControl, Overrides};
use raven_actors::ipc::single::SupervisorLock;
use raven_actors::ipc::{bind, serve, ControlHandler, IpcError, Listener};
use raven_actors::process::{memory, terminate_gateway, ChildEvent, GatewayChild};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn run(dir: &DataDir) -> Result<(), CliError> {
    let started = Instant::now();
    let config = own_config(dir)?;
    super::warn_about_zone(&config);
    dir.ensure().map_err(CliError::data_dir(dir.root()))?;
    let socket = dir.socket();
    // Before anything else: one supervisor per data dir, whatever the socket says.
    let _held = SupervisorLock::take(&dir.supervisor_lock())?;
    actix_rt::System::new().block_on(async move {
        let listener = bind(&socket).await.map_err(|e| match e {
            IpcError::AlreadyRunning { .. } => CliError::Socket(e),
            other => CliError::ControlSocket(other),
        })?;
        // With the gateway on, it hosts the outlets that face the outside.
        let remote_channels = if config.gateway.enabled { hosted_channels(&config) } else { Vec::new() };
        let o = Overrides { remote_channels, ..Default::default() };
        let mut engine = Engine::start_with(dir, &config, Arc::new(SystemClock), o)?;
        engine.follow_config(dir, &dir.config());
        let loops = engine.spawn_loops(&config);
        let control: Rc<dyn ControlHandler> = Rc::new(EngineControl::of(&engine));
        let server = actix_rt::spawn(keep_socket(listener, control, socket.clone()));
        let first = Duration::from_millis(config.gateway.restart_backoff_ms.max(1));
        let gateway = config.gateway.enabled.then(|| GatewayChild::start(dir, first, tell));
        tracing::info!(socket = %socket.display(), provider = %engine.provider_name, "ready in {:?}", started.elapsed());
        let g = &config.general;
        let zone = raven_actors::time::UserZone {
            tz: g.timezone,
            source: g.timezone_source.clone(),
            warning: g.timezone_warning.clone(),
        };
        if let Err(e) = raven_actors::time::zone::publish(&dir.zone(), &zone) {
            tracing::warn!("cannot write {}: {e}", dir.zone().display());
        }
        super::note(format!(
            "raven: ready on {} (pid {}); times in {} (from {})",
            socket.display(),
            std::process::id(),
            g.timezone.name(),
            g.timezone_source
        ));
        super::note(what_runs(&config, &engine.provider_name));
        super::note(reaches(&config));
        // Start-up's code and buffers are not needed while idle: give them back, now and after
        // each burst of work.
        let trim = actix_rt::spawn(memory::give_back_while_idle(memory::EVERY));
        wait_for_signal().await;
        trim.abort();
        super::note("raven: stopping");
        server.abort();
        if let Some(g) = gateway {
            g.stop(); // drops the child, which kill_on_drop stops
        }
        // An adopted gateway is not our child: stop it by its pid.
        terminate_gateway(dir);
        for l in loops {
            l.abort();
        }
        // State is written through on every change; closing the socket is what is left, and
        // the files that name this supervisor's processes (the zone it published, the
        // gateway's address).
        let _ = std::fs::remove_file(&socket);
        let _ = std::fs::remove_file(dir.zone());
        let _ = std::fs::remove_file(dir.gateway_addr());
        Ok(())
    })
}

/// What this supervisor runs, and what to do next, in two lines a new user can act on.
fn what_runs(config: &raven_actors::config::RavenConfig, provider: &str) -> String {
    let on_off = |on: bool, every: u64| {
        if on {
            format!("every {}", humantime::format_duration(Duration::from_secs(every)))
        } else {
            "off".into()
        }
    };
    let sentinel = match config.sentinel.enabled {
        true => on_off(true, config.sentinel.interval_s),
        false => "off ([sentinel] enabled = true turns it on)".into(),
    };
    let model = match provider {
        "rules" => "the embedded rules (no LLM: set [llm] base_url for one)".to_owned(),
        other => format!("{other} at {}", config.llm.base_url),
    };
    let gateway = match config.gateway.enabled {
        true => format!("on {}", config.gateway.listen),
        false => "off".into(),
    };
    format!(
        "raven: runs the Sentinel tick {sentinel}, the heartbeat {}, cron, and the gateway {gateway}; \
         model: {model}\nraven: next: `raven repl` to talk to it, `raven cron add --in 10m \"stretch\"` for a \
         reminder, `raven status` to see it, `raven log` for what it decided",
        on_off(config.heartbeat.enabled, config.heartbeat.interval_s),
    )
}

/// Where nudges reach the user, and the chat channels that listen; or how to add one. An
/// untargeted nudge goes to `delivery.default_targets`; the terminal's (the default) goes to
/// the first chat channel's chat while no terminal shows it.
fn reaches(config: &raven_actors::config::RavenConfig) -> String {
    let listening = config.channels.enabled();
    if listening.is_empty() {
        return format!("raven: {}", super::channels::how_to_add());
    }
    let targets = &config.delivery.default_targets;
    let terminal_only = targets.iter().all(|t| t == "cli" || t.starts_with("cli:"));
    let to = match (terminal_only, config.channels.first_home()) {
        (false, _) => targets.join(", "),
        (true, Some(home)) => format!("{home} (a terminal showing them takes them first)"),
        (true, None) => "the terminal only: no enabled channel names your chat".to_owned(),
    };
    format!(
        "raven: nudges reach you on {to}; chats listened to: {} (`raven channels` shows their health, `raven channels test <name>` sends a test)",
        listening.join(", ")
    )
}

/// The supervisor's own config: its zone is its own to resolve (a stale zone file of a killed
/// supervisor is not its business), and its clients take it from there.
fn own_config(dir: &DataDir) -> Result<raven_actors::config::RavenConfig, CliError> {
    Ok(raven_actors::config::RavenConfig::load(&dir.config())?.0)
}

/// Serves the control socket, and makes it anew when its file disappears (deleted by hand, or
/// by a cleaner of temp files): the lock says this is still the data dir's supervisor.
async fn keep_socket(listener: Listener, control: Rc<dyn ControlHandler>, socket: std::path::PathBuf) {
    let mut server = Some(actix_rt::spawn(serve(listener, control.clone(), socket.clone())));
    loop {
        actix_rt::time::sleep(Duration::from_millis(500)).await;
        if socket.exists() {
            continue;
        }
        // The old listener goes first: dropping it removes its path, which the new one takes.
        if let Some(old) = server.take() {
            old.abort();
            let _ = old.await;
        }
        match bind(&socket).await {
            Ok(listener) => {
                server = Some(actix_rt::spawn(serve(listener, control.clone(), socket.clone())));
                super::note(format!("raven: {} was gone; made it anew", socket.display()));
            }
            Err(e) => tracing::warn!("the control socket is gone and cannot be made anew: {e}"),
        }
    }
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

/// Says what became of the gateway child.
fn tell(event: ChildEvent) {
    match event {
        ChildEvent::Adopted { pid } => super::note(format!("raven: adopting the running gateway (pid {pid})")),
        ChildEvent::AdoptedExited { pid } => {
            super::note(format!("raven: the adopted gateway (pid {pid}) exited; starting a new one"))
        }
        ChildEvent::CannotListen => {
            super::note("raven: running without the gateway; trying its address again every minute")
        }
        ChildEvent::Exited { status, restart_in } => {
            super::note(format!("raven: gateway exited ({status}); restarting in {restart_in:?}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_names_where_nudges_go_not_every_channel() {
        let mut config = raven_actors::config::RavenConfig::default();
        assert!(reaches(&config).contains("no chat channel is set up"), "{}", reaches(&config));
        config.channels.telegram.enabled = true;
        config.channels.telegram.allowed_users = vec!["42".into()];
        config.channels.ntfy.enabled = true;
        config.channels.ntfy.topic = "phone".into();
        let line = reaches(&config);
        assert!(line.starts_with("raven: nudges reach you on telegram:42 (a terminal"), "{line}");
        assert!(line.contains("chats listened to: telegram, ntfy"), "{line}");
        config.delivery.default_targets = vec!["ntfy:phone".into()];
        assert!(reaches(&config).starts_with("raven: nudges reach you on ntfy:phone;"), "{}", reaches(&config));
    }
}
