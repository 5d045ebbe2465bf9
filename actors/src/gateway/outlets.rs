//! The outlets the gateway hosts (jsonl, webhook, and the chat channels of `[channels.*]`):
//! the supervisor's DeliveryHub pushes each delivery for their channels over one connection,
//! and each is delivered here and answered. The settings of jsonl and webhook follow
//! config.toml: a change to `[delivery]` builds them anew for the next delivery; the set of
//! channels, and the chat channels' settings, are fixed at start (a change needs a restart).

use crate::config::{LiveConfig, RavenConfig};
use crate::data_dir::DataDir;
use crate::delivery::outlets::{Outlet, OutletError};
use crate::engine::{configured_outlets, hosted_channels, StartError};
use crate::ipc::{ControlClient, Pushed};
use crate::watch::{watch_edited_file, FileWatch, SETTLE};
use raven_proto::control::{ControlRequest, ControlResponse};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, RwLock};

/// The hosted outlets, shared with the config watcher that replaces them.
#[derive(Clone)]
pub(super) struct Hosted {
    channels: Vec<String>,
    outlets: Arc<RwLock<Vec<Arc<dyn Outlet>>>>,
    /// The chat channels' adapters, and why each enabled one that is not there could not start.
    chats: Arc<Vec<Arc<dyn Outlet>>>,
    broken: Arc<Vec<(String, String)>>,
    live: LiveConfig,
}

impl Hosted {
    /// The configured outlets whose channels the gateway hosts.
    pub fn of(dir: &DataDir, config: &RavenConfig, chats: super::channels::Channels) -> Result<Hosted, StartError> {
        let channels = hosted_channels(config);
        let outlets = build(dir, config, &channels)?;
        Ok(Hosted {
            channels,
            outlets: Arc::new(RwLock::new(outlets)),
            chats: Arc::new(chats.outlets),
            broken: Arc::new(chats.broken),
            live: LiveConfig::new(config.clone()),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// The outlet of `channel` as it stands now.
    fn get(&self, channel: &str) -> Option<Arc<dyn Outlet>> {
        if let Some(chat) = self.chats.iter().find(|o| o.channel() == channel) {
            return Some(chat.clone());
        }
        let outlets = self.outlets.read().unwrap_or_else(|p| p.into_inner());
        outlets.iter().find(|o| o.channel() == channel).cloned()
    }

    /// Why `channel`, enabled, has no adapter (its messages wait for it in the outbox).
    fn broken(&self, channel: &str) -> Option<String> {
        self.broken.iter().find(|(c, _)| c == channel).map(|(c, why)| format!("the {c} channel cannot start: {why}"))
    }

    /// Rebuilds the outlets when `[delivery]` changes in the data dir's config.toml (kept
    /// alive by the returned watch).
    pub fn follow_config(&self, dir: &DataDir) -> Option<FileWatch> {
        let (hosted, dir2, path) = (self.clone(), dir.clone(), dir.config());
        let watched = watch_edited_file(&dir.config(), SETTLE, move || hosted.on_change(&dir2, &path));
        watched.inspect_err(|e| tracing::warn!("config.toml is not watched by the gateway: {e}")).ok()
    }

    fn on_change(&self, dir: &DataDir, path: &std::path::Path) {
        let reload = match self.live.reload(path) {
            Ok(r) => r,
            Err(e) => return tracing::warn!("config.toml not taken, the gateway's outlets stay as they are: {e}"),
        };
        if !reload.touches("delivery") || self.is_empty() {
            return;
        }
        match build(dir, &self.live.get(), &self.channels) {
            Ok(outlets) => {
                *self.outlets.write().unwrap_or_else(|p| p.into_inner()) = outlets;
                tracing::info!("the gateway's outlets follow the new [delivery] settings");
            }
            Err(e) => tracing::warn!("the gateway's outlets keep their running settings: {e}"),
        }
    }
}

fn build(dir: &DataDir, config: &RavenConfig, channels: &[String]) -> Result<Vec<Arc<dyn Outlet>>, StartError> {
    let all = configured_outlets(dir, config, &Default::default())?;
    Ok(all.into_iter().filter(|o| channels.iter().any(|c| c == o.channel())).collect())
}

/// Keeps one connection to the supervisor, which pushes each delivery for the hosted
/// channels. A lost supervisor is looked for again every 200 ms (what it could not hand over
/// waits in its outbox meanwhile).
pub(super) async fn host(socket: PathBuf, hosted: Hosted) {
    let channels = hosted.channels.clone();
    loop {
        if let Ok(c) = ControlClient::connect(&socket).await {
            let (client, mut pushed) = c.into_duplex();
            let client = Rc::new(client);
            if let Ok(ControlResponse::Hosting) =
                client.request(ControlRequest::HostOutlets { channels: channels.clone() }).await
            {
                tracing::info!("hosting the {channels:?} outlets");
                while let Some(p) = pushed.recv().await {
                    let Pushed::Deliver { id, text } = p else { continue };
                    let (client, outlet) = (client.clone(), hosted.get(&text.channel));
                    let broken = hosted.broken(&text.channel);
                    actix_rt::spawn(async move {
                        let (error, transient) = match (outlet, broken) {
                            (None, Some(why)) => (Some(why), true),
                            (None, None) => (Some(format!("the gateway hosts no `{}` outlet", text.channel)), false),
                            (Some(o), _) => match o.deliver(&text).await {
                                Ok(()) => (None, false),
                                Err(OutletError::Transient(e)) => (Some(e), true),
                                Err(OutletError::Refused(e)) => (Some(e), false),
                            },
                        };
                        let _ = client.request(ControlRequest::Delivered { id, error, transient }).await;
                    });
                }
            }
        }
        actix_rt::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
