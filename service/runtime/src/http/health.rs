//! Probes and scrapes: `/healthz` (the process answers), `/readyz` (this replica should get
//! traffic) and `/metrics` (Prometheus text). Unauthenticated, outside the MCP endpoint's
//! checks and limits, and answered from memory: no probe ever waits on a backend.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;

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
    state.metrics.listen_streams.set(state.streams.open() as f64);
    if let Some(redis) = &state.redis {
        state.metrics.redis_up(redis.is_up());
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], state.metrics.render()).into_response()
}
