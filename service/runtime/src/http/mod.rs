//! The Streamable HTTP transport (digest e): the router, the MCP endpoint and its ordered
//! checks, and JSON / SSE replies.
//!
//! - [`auth`]: bearer-token authentication and the protected-resource metadata.
//! - [`endpoint`]: `POST /mcp` from bytes to a dispatched request.
//! - [`inbound`]: the checks of digest a.5, in order, stopping at the first failure.
//! - [`reply`]: JSON, error and SSE responses.
//! - [`stream`]: running a call whose notifications may turn the answer into SSE.

pub mod auth;
pub mod endpoint;
pub mod inbound;
pub mod reply;
pub mod stream;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::routing::{any, get};
use tokio::net::TcpListener;

use crate::state::AppState;

/// The router: the MCP endpoint plus unauthenticated health probes.
pub fn app(state: Arc<AppState>) -> Router {
    let metadata = format!("/.well-known/oauth-protected-resource{}", state.server.path);
    Router::new()
        .route(&state.server.path, any(endpoint::handle))
        .route(&metadata, get(|State(s): State<Arc<AppState>>| async move { auth::metadata(s.auth.load().as_deref()) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|State(s): State<Arc<AppState>>| async move { ready(&s) }))
        .with_state(state)
}

/// `/readyz`: 200 while this replica should receive traffic, 503 with the reason otherwise.
fn ready(state: &AppState) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match state.ready() {
        Ok(()) => "ready".into_response(),
        Err(why) => (axum::http::StatusCode::SERVICE_UNAVAILABLE, why).into_response(),
    }
}

/// Serves until `shutdown` resolves, then stops accepting, closes listen streams gracefully
/// and lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let token = state.shutdown.clone();
    let signal = async move {
        shutdown.await;
        token.cancel();
    };
    axum::serve(listener, app(state)).with_graceful_shutdown(signal).await
}
