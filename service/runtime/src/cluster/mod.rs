//! Shared state across replicas, all optional: with `[redis]` configured the replicas share
//! caches, change notifications, rate-limit budgets and tasks; without it (or while Redis is
//! down) each replica uses its own. Redis being slow or down never takes the service down.
//!
//! - [`redis`]: the link: timeouts, circuit breaker, state-change logging.
//! - [`link`]: the connection to one server, a Sentinel's master or a Cluster (TLS, ACL).
//! - [`fanout`]: change events over Redis pub/sub.
//! - [`cache`]: moka L1 + Redis L2 result cache.
//! - [`ratelimit`]: GCRA per caller × tool and per tool.
//! - [`relay`]: 2025-era clients' answers to the replica that asked.
//! - [`task_store`]: the tasks extension's records and their store (memory, Redis).

pub mod cache;
pub mod fanout;
pub mod link;
pub mod ratelimit;
pub mod redis;
pub mod relay;
pub mod task_store;
