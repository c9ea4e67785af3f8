//! Probes and scrapes: `/healthz` (the process answers), `/readyz` (this replica should get
//! traffic) and `/metrics` (Prometheus text). Unauthenticated, outside the MCP endpoint's
//! checks and limits, and answered from memory: no probe ever waits on a backend.

use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::state::AppState;

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
    fn report(&self, draining: bool) -> (bool, Map<String, Value>) {
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

/// `/healthz` and `/readyz`, plus `/metrics` when `with_metrics`.
pub fn routes(with_metrics: bool) -> Router<Arc<AppState>> {
    let r = Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz));
    if with_metrics { r.route("/metrics", get(metrics)) } else { r }
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let (ready, checks) = state.readiness.report(state.shutdown.is_cancelled());
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let body = json!({ "status": if ready { "ready" } else { "not ready" }, "checks": checks });
    (status, axum::Json(body)).into_response()
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    state.metrics.listen_streams.set(state.listen_streams.load(Ordering::Relaxed) as f64);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], state.metrics.render()).into_response()
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
