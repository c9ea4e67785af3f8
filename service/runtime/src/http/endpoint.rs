//! `POST /mcp`: prechecks, body with a size limit, parse, dispatch.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;

use super::auth;
use super::inbound::{self, Inbound};
use super::reply;
use crate::methods;
use crate::rpc::{Kind, RpcError};
use crate::state::AppState;

/// The MCP endpoint handler.
pub async fn handle(State(state): State<Arc<AppState>>, request: Request) -> Response {
    // Taken apart rather than extracted as `Method` + `HeaderMap`: axum's `HeaderMap`
    // extractor clones every header of every request (measured: ~3 % of a tools/call).
    let (parts, body) = request.into_parts();
    let (method, headers) = (&parts.method, &parts.headers);
    // Refusals before dispatch are counted by reason (`mcp_server_rejected_total`).
    let refuse = |r: inbound::Rejection| {
        state.metrics.rejected(r.error.kind.as_str());
        reply::error(r.id.as_ref(), &r.error)
    };
    let accepts = match inbound::precheck(&state.server, method, headers) {
        Ok(a) => a,
        Err(r) => return refuse(r),
    };
    // Authentication comes first, before any JSON-RPC processing (digest k [DECISION]).
    let auth_config = state.auth.load();
    let identity = match auth::authenticate(auth_config.as_deref(), headers) {
        Ok(identity) => identity,
        Err(rejected) => {
            state.metrics.rejected(Kind::Unauthorized.as_str());
            return auth::unauthorized(auth_config.as_deref(), rejected, &state.server.path);
        }
    };
    // The body-limit layer (`layers::protect`) has already read the body within
    // `server.max_body_bytes` (413 past it): this only takes the buffered bytes.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return reply::error(None, &RpcError::new(Kind::InvalidRequest, "Bad Request: the body could not be read"));
    };
    let registry = state.registry.load_full();
    match inbound::parse(&registry, headers, &bytes, accepts) {
        Ok(Inbound::Notification) => reply::accepted(),
        Ok(Inbound::Request(req)) => methods::dispatch(&state, registry, headers, *req, identity).await,
        Err(r) => refuse(r),
    }
}
