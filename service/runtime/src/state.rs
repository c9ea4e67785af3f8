//! Shared state of one replica: configuration, the current registry, the change bus,
//! the requestState sealer and the shutdown signal.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use arc_swap::ArcSwap;
use tokio_util::sync::CancellationToken;

use crate::adapters;
use crate::config::{AuthConfig, Config, ConfigError, ServerConfig};
use crate::events::Events;
use crate::mrtr::Sealer;
use crate::registry::Registry;
use crate::tasks::{MemoryStore, Tasks};

/// Everything a request handler reads. Built once; the registry is swapped on reload.
#[derive(Debug)]
pub struct AppState {
    /// `[server]` settings.
    pub server: ServerConfig,
    /// The current registry (lock-free snapshot per request).
    pub registry: ArcSwap<Registry>,
    /// Change bus.
    pub events: Events,
    /// Seals and opens MRTR `requestState`.
    pub sealer: Sealer,
    /// Fires when the server shuts down: listen streams close gracefully.
    pub shutdown: CancellationToken,
    /// Open `subscriptions/listen` streams on this replica.
    pub listen_streams: AtomicUsize,
    /// The tasks extension.
    pub tasks: Arc<Tasks>,
    /// Bearer-token authentication, when configured.
    pub auth: Option<AuthConfig>,
}

impl AppState {
    /// Builds adapters and the registry from a validated config.
    pub async fn build(config: &Config) -> Result<Arc<Self>, ConfigError> {
        let events = Events::new();
        let adapters = adapters::build(config, &events).await?;
        let registry = Registry::build(config, &adapters)?;
        Ok(Arc::new(Self {
            server: config.server.clone(),
            registry: ArcSwap::from_pointee(registry),
            events,
            sealer: Sealer::new(&config.request_state),
            shutdown: CancellationToken::new(),
            listen_streams: AtomicUsize::new(0),
            tasks: Arc::new(Tasks::new(Arc::new(MemoryStore::default()), config.tasks)),
            auth: config.auth.clone(),
        }))
    }
}
