//! What `/readyz` asks: the checks this replica registers (Redis, when `redis.required`),
//! answered from memory so no probe ever waits on a backend.

use std::sync::{Arc, RwLock};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::cluster::redis::Redis;

/// Something `/readyz` asks, e.g. "is Redis reachable" when the config requires Redis. Must
/// answer from state it keeps up to date itself (a background ping), never by doing I/O.
pub trait ReadinessCheck: Send + Sync + 'static {
    /// Name shown in the `/readyz` body.
    fn name(&self) -> &'static str;
    /// `Err(reason)` while this replica should not get traffic.
    fn ready(&self) -> Result<(), String>;
}

/// The readiness checks of this replica. The configuration and the adapters are ready by
/// construction (the state is only built when both are); other parts register checks.
#[derive(Default)]
pub struct Readiness {
    checks: RwLock<Vec<Arc<dyn ReadinessCheck>>>,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.checks.read().expect("readiness lock").iter().map(|c| c.name()).collect();
        f.debug_struct("Readiness").field("checks", &names).finish()
    }
}

impl Readiness {
    /// Adds a check (e.g. Redis, when `required`).
    pub fn register(&self, check: Arc<dyn ReadinessCheck>) {
        self.checks.write().expect("readiness lock").push(check);
    }

    /// Overall readiness and one line per check.
    pub fn report(&self, draining: bool) -> (bool, Map<String, Value>) {
        let mut checks = Map::new();
        checks.insert("config".into(), json!("ok"));
        checks.insert("adapters".into(), json!("ok"));
        let mut ready = !draining;
        if draining {
            checks.insert("shutdown".into(), json!("draining"));
        }
        for c in self.checks.read().expect("readiness lock").iter() {
            match c.ready() {
                Ok(()) => checks.insert(c.name().into(), json!("ok")),
                Err(reason) => {
                    ready = false;
                    checks.insert(c.name().into(), json!(reason))
                }
            };
        }
        (ready, checks)
    }
}

/// `/readyz` check when `redis.required`: kept current by a ping every second, so the probe
/// itself never waits on Redis. Without `required`, a Redis outage only degrades to local
/// state and readiness stays green.
pub(super) struct RedisRequired(Arc<Redis>);

impl RedisRequired {
    pub(super) fn start(redis: Arc<Redis>, shutdown: CancellationToken) -> Self {
        let pinged = Arc::clone(&redis);
        tokio::spawn(async move {
            loop {
                let _ = pinged
                    .call(|mut con| async move { redis::cmd("PING").query_async::<String>(&mut con).await })
                    .await;
                tokio::select! {
                    () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                    () = shutdown.cancelled() => return,
                }
            }
        });
        Self(redis)
    }
}

impl ReadinessCheck for RedisRequired {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn ready(&self) -> Result<(), String> {
        if self.0.is_up() { Ok(()) } else { Err("required and unreachable".into()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Redis(Result<(), String>);

    impl ReadinessCheck for Redis {
        fn name(&self) -> &'static str {
            "redis"
        }
        fn ready(&self) -> Result<(), String> {
            self.0.clone()
        }
    }

    #[test]
    fn registered_checks_and_draining_decide_readiness() {
        let r = Readiness::default();
        assert!(r.report(false).0);
        assert!(!r.report(true).0, "not ready while shutting down");
        r.register(Arc::new(Redis(Ok(()))));
        assert_eq!(r.report(false).1["redis"], "ok");
        r.register(Arc::new(Redis(Err("unreachable".into()))));
        let (ready, checks) = r.report(false);
        assert!(!ready);
        assert_eq!(checks["redis"], "unreachable");
    }
}
