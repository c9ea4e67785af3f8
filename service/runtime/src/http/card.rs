//! The server card (SEP-2127, draft) at `<server.path>/server-card` and at
//! `/.well-known/mcp/server-card`: public (no token, outside the MCP endpoint's checks),
//! readable from any web page (`Access-Control-Allow-Origin: *`) and cacheable as long as
//! `server/discover` is. 404 while `[server_card]` is off.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::cors::{Any, CorsLayer};

use crate::state::AppState;

/// The card's two routes for an endpoint at `path`.
pub fn routes(path: &str) -> Router<Arc<AppState>> {
    let cors = CorsLayer::new().allow_origin(Any).allow_methods([Method::GET]);
    Router::new()
        .route(&format!("{}/server-card", path.trim_end_matches('/')), get(card))
        .route("/.well-known/mcp/server-card", get(card))
        .layer(cors)
}

async fn card(State(state): State<Arc<AppState>>) -> Response {
    let registry = state.registry.load();
    let Some(body) = registry.card.clone() else {
        return (StatusCode::NOT_FOUND, "no server card: [server_card] is off\n").into_response();
    };
    let max_age = registry.caching.discover.ttl_ms / 1000;
    let cache = format!("public, max-age={max_age}");
    ([(header::CONTENT_TYPE, "application/json".to_owned()), (header::CACHE_CONTROL, cache)], body).into_response()
}
