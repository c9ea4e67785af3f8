//! Shared state of one replica: configuration, the current registry, the change bus, the
//! requestState sealer, the shared-state links (Redis, caches, rate limits, tasks), the
//! operational parts (metrics, readiness, limits) and the shutdown signal. What a reload may
//! change (registry, key ring, tokens) sits behind `ArcSwap`, so requests read a consistent
//! snapshot without locks.
//!
//! - [`readiness`]: the `/readyz` checks.
//! - [`streams`]: open listen and GET streams under their caps.
//! - [`tasks`]: the task book (records, running jobs); rounds run in [`crate::tasks`].

pub mod readiness;
pub mod streams;
pub mod tasks;

use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::adapters;
use crate::auth::Authenticator;
use crate::cluster::cache::ResultCache;
use crate::cluster::fanout;
use crate::cluster::ratelimit::RateLimiter;
use crate::cluster::redis::Redis;
use crate::cluster::relay::Relay;
use crate::cluster::task_store::{MemoryStore, RedisTaskStore, TaskStore};
use crate::config::{Config, ConfigError, ConsoleConfig, LimitsConfig, ServerConfig};
use crate::events::Events;
use crate::mrtr::Sealer;
use crate::registry::Registry;
use crate::telemetry::audit::Audit;
use crate::telemetry::recent::RecentCalls;
use crate::telemetry::records::Records;
use crate::telemetry::series::Series;
use crate::telemetry::{self, metrics::Metrics};
use readiness::RedisRequired;
pub use readiness::{Readiness, ReadinessCheck};
use tasks::Tasks;

/// Everything a request handler reads.
#[derive(Debug)]
pub struct AppState {
    /// `[server]` settings (fixed for the life of the process).
    pub server: ServerConfig,
    /// The current registry (swapped on reload and on catalog changes, through
    /// [`AppState::install`] only).
    pub registry: ArcSwap<Registry>,
    /// Held while a registry is swapped in and its gauges set, so the gauges are the current
    /// registry's whichever of a reload and a catalog rebuild comes last.
    installing: std::sync::Mutex<()>,
    /// Seals and opens MRTR `requestState` (swapped on reload: key rotation).
    pub sealer: ArcSwap<Sealer>,
    /// Bearer-token authentication, when configured (swapped on reload).
    pub auth: ArcSwapOption<Authenticator>,
    /// Change bus.
    pub events: Events,
    /// The shared Redis, when configured.
    pub redis: Option<Arc<Redis>>,
    /// Callers' own upstream connections (`[user_auth]`), when configured; fixed for the life
    /// of the process.
    pub connections: Option<Arc<crate::connect::Connections>>,
    /// Result cache (L1, plus Redis as L2).
    pub cache: ResultCache,
    /// Rate limits (cluster-wide with Redis).
    pub limiter: RateLimiter,
    /// The task book of the tasks extension.
    pub tasks: Arc<Tasks>,
    /// Fires when the server shuts down: listen streams close gracefully.
    pub shutdown: CancellationToken,
    /// Open `subscriptions/listen` and 2025-era GET streams on this replica, under their caps.
    pub streams: Arc<streams::Streams>,
    /// Every metric (pre-registered handles).
    pub metrics: Arc<Metrics>,
    /// What the request path does for tracing.
    pub telemetry: telemetry::Flags,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// Concurrency slots of the MCP endpoint (`limits.max_concurrent_requests`).
    pub slots: Arc<Semaphore>,
    /// `/readyz` checks.
    pub readiness: Readiness,
    /// This process's random id (skips its own fan-out messages, names the relay channel).
    pub replica: String,
    /// Answers of 2025-era clients to server-to-client requests, routed to the asking replica.
    pub relay: Arc<Relay>,
    /// `logging/setLevel` of 2025-era sessions on this replica (index into the log levels), by session digest.
    pub legacy_log_levels: moka::future::Cache<String, usize>,
    /// `resources/subscribe` of 2025-era sessions on this replica, by session digest.
    pub legacy_subscriptions: moka::future::Cache<String, Arc<std::collections::BTreeSet<String>>>,
    /// `/metrics` is served on its own listener (`telemetry.metrics_listen`).
    pub separate_metrics: bool,
    /// The operator console's settings and what it keeps, when `[console]` is enabled.
    pub console: Option<Console>,
    /// The console's ring of recent calls (`None` when the console is off).
    pub recent_calls: Option<Arc<RecentCalls>>,
    /// Where calls hand their records ([`AppState::start_records`]; unset when nothing reads
    /// them: the request path then builds none).
    pub records: std::sync::OnceLock<Arc<Records>>,
}

/// Points per chart: 15 minutes at one point per [`SAMPLE_EVERY`].
pub const SERIES_POINTS: usize = 180;

/// How often the console samples the counters (only while it is enabled).
pub const SAMPLE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// What the operator console needs beyond the rest of the state.
#[derive(Debug)]
pub struct Console {
    /// `[console]`.
    pub config: ConsoleConfig,
    /// Start of this process (Unix milliseconds), for the uptime.
    pub started_ms: u64,
    /// The configuration file as given (`<embedded default>` for the built-in one).
    pub config_file: String,
    /// The last reload: when (Unix ms), whether it was accepted, and why not.
    pub last_reload: std::sync::Mutex<Option<(u64, bool, Option<String>)>>,
    /// Per-tool charts, sampled by the console's task.
    pub series: std::sync::Mutex<Series>,
}

impl AppState {
    /// Builds adapters and the registry from a validated config and connects the shared state
    /// (tests and benchmarks; the binary goes through [`AppState::with_catalog`]).
    pub async fn build(config: &Config) -> Result<Arc<Self>, ConfigError> {
        let catalog = adapters::Catalog::load(config).await?;
        let state = Self::with_catalog(config, catalog)?;
        state.start_records(config)?;
        Ok(state)
    }

    /// Starts the call records' writer: the per-call log line (when `RUST_LOG` lets it
    /// through), the console's recent calls, the audit trail (its file opened for appending
    /// now). Not by `check`, which must not write a trail; once per process.
    pub fn start_records(&self, config: &Config) -> Result<(), ConfigError> {
        let audit = config
            .audit
            .as_ref()
            .map(|a| Audit::open(a, &self.replica).map_err(|e| ConfigError::invalid("audit.file", e)))
            .transpose()?;
        let log = tracing::enabled!(target: telemetry::records::CALL_LOG, tracing::Level::INFO)
            .then_some(config.telemetry.log_format);
        let dropped = self.metrics.call_records_dropped();
        if let Some(records) = Records::start(log, self.recent_calls.clone(), audit, dropped) {
            let _ = self.records.set(records);
        }
        Ok(())
    }

    /// Connects the shared state around a catalog built from `config`.
    pub fn with_catalog(config: &Config, catalog: adapters::Catalog) -> Result<Arc<Self>, ConfigError> {
        let adapters::Catalog { events, metrics, adapters: _, registry } = catalog;
        let redis = match &config.redis {
            Some(r) => Some(Arc::new(
                Redis::new(r).map_err(|e| ConfigError::invalid("redis.url", format!("cannot use it: {e}")))?,
            )),
            None => None,
        };
        let shutdown = CancellationToken::new();
        let store: Arc<dyn TaskStore> = match &redis {
            Some(r) => Arc::new(RedisTaskStore::new(Arc::clone(r))),
            None => Arc::new(MemoryStore::default()),
        };
        let readiness = Readiness::default();
        let replica = replica_id();
        let relay = Relay::start(replica.clone(), redis.clone(), shutdown.clone());
        if redis.is_none() {
            tracing::info!(
                "no [redis]: a 2025-era client's answer to an elicitation, sampling or roots request reaches the asking call only on this replica; with several replicas, configure [redis] (such calls otherwise end with a tool error)"
            );
        }
        if let Some(r) = &redis {
            fanout::start(Arc::clone(r), &events, replica.clone(), shutdown.clone());
            if r.required {
                readiness.register(Arc::new(RedisRequired::start(Arc::clone(r), shutdown.clone())));
            }
        }
        let connections = match &config.user_auth {
            Some(u) => Some(Arc::new(
                crate::connect::Connections::new(u.clone(), redis.clone(), Arc::clone(&metrics))
                    .map_err(|e| ConfigError::invalid("user_auth", e))?,
            )),
            None => None,
        };
        Ok(Arc::new(Self {
            connections,
            server: config.server.clone(),
            registry: ArcSwap::from_pointee(registry),
            sealer: ArcSwap::from_pointee(Sealer::new(&config.request_state)),
            auth: ArcSwapOption::from(config.auth.clone().map(|a| Arc::new(Authenticator::new(a)))),
            events,
            cache: ResultCache::new(redis.clone(), &metrics),
            limiter: RateLimiter::new(redis.clone(), Some(&metrics)).with_lease(config.rate_limits.lease),
            tasks: Arc::new(Tasks::new(store, config.tasks)),
            redis,
            shutdown,
            streams: streams::Streams::new(
                config.server.max_listen_streams,
                config.server.max_listen_streams_per_caller,
            ),
            metrics,
            telemetry: telemetry::Flags::new(&config.telemetry),
            limits: config.limits.clone(),
            slots: Arc::new(Semaphore::new(config.limits.max_concurrent_requests)),
            readiness,
            replica,
            relay,
            legacy_log_levels: moka::future::Cache::builder()
                .max_capacity(100_000)
                .time_to_idle(std::time::Duration::from_secs(24 * 3600))
                .build(),
            legacy_subscriptions: moka::future::Cache::builder()
                .max_capacity(100_000)
                .time_to_idle(std::time::Duration::from_secs(24 * 3600))
                .build(),
            separate_metrics: config.telemetry.metrics_listen.is_some(),
            recent_calls: config.console.as_ref().map(|c| Arc::new(RecentCalls::new(c.recent_calls, c.show_arguments))),
            records: std::sync::OnceLock::new(),
            installing: std::sync::Mutex::new(()),
            console: config.console.clone().map(|console| Console {
                config: console,
                started_ms: crate::clock::now_ms(),
                config_file: config.source.name.clone(),
                last_reload: std::sync::Mutex::new(None),
                series: std::sync::Mutex::new(Series::new(SERIES_POINTS)),
            }),
        }))
    }

    /// Swaps in `registry` and sets the metrics it feeds (pinning gauges, per-tool handles);
    /// returns the registry it replaced.
    pub fn install(&self, registry: Arc<Registry>) -> Arc<Registry> {
        let _one_at_a_time = self.installing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.metrics.reload(&registry);
        self.registry.swap(registry)
    }

    /// [`AppState::install`] of a registry rebuilt from `old`, only if `old` is still the
    /// current one (else a reload came in between: false, nothing changes).
    pub fn install_over(&self, old: &Arc<Registry>, registry: Arc<Registry>) -> bool {
        let _one_at_a_time = self.installing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !Arc::ptr_eq(&self.registry.load(), old) {
            return false;
        }
        self.metrics.reload(&registry);
        self.registry.store(registry);
        true
    }
}

impl Console {
    /// Notes a reload's outcome for the Overview page.
    pub fn reloaded(&self, error: Option<String>) {
        let mut last = self.last_reload.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *last = Some((crate::clock::now_ms(), error.is_none(), error));
    }
}

/// A random id for this process, so it can skip its own fan-out messages.
fn replica_id() -> String {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; 8];
    ring::rand::SystemRandom::new().fill(&mut bytes).expect("system randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
