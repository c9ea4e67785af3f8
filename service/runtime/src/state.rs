//! Shared state of one replica: configuration, the current registry, the change bus,
//! the requestState sealer, the shutdown signal, and the operational parts (metrics,
//! readiness, limits).

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use arc_swap::ArcSwap;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::adapters;
use crate::config::{Config, ConfigError, LimitsConfig, ServerConfig};
use crate::events::Events;
use crate::http::health::Readiness;
use crate::mrtr::Sealer;
use crate::registry::Registry;
use crate::telemetry::{self, metrics::Metrics};

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
    /// Every metric (pre-registered handles).
    pub metrics: Metrics,
    /// What the request path does for tracing.
    pub telemetry: telemetry::Flags,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// Concurrency slots of the MCP endpoint (`limits.max_concurrent_requests`).
    pub slots: Arc<Semaphore>,
    /// `/readyz` checks.
    pub readiness: Readiness,
    /// `/metrics` is served on its own listener (`telemetry.metrics_listen`).
    pub separate_metrics: bool,
}

impl AppState {
    /// Builds adapters and the registry from a validated config.
    pub async fn build(config: &Config) -> Result<Arc<Self>, ConfigError> {
        let events = Events::new();
        let adapters = adapters::build(config, &events).await?;
        let registry = Registry::build(config, &adapters)?;
        let metrics = Metrics::new(&adapters, telemetry::Flags::otel_metrics(&config.telemetry));
        Ok(Arc::new(Self {
            server: config.server.clone(),
            registry: ArcSwap::from_pointee(registry),
            events,
            sealer: Sealer::new(&config.request_state),
            shutdown: CancellationToken::new(),
            listen_streams: AtomicUsize::new(0),
            metrics,
            telemetry: telemetry::Flags::new(&config.telemetry),
            limits: config.limits.clone(),
            slots: Arc::new(Semaphore::new(config.limits.max_concurrent_requests)),
            readiness: Readiness::default(),
            separate_metrics: config.telemetry.metrics_listen.is_some(),
        }))
    }
}
