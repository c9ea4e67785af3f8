//! `POST /mcp` (and the 2025-era GET and DELETE): prechecks, parse, dispatch.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::response::{IntoResponse as _, Response};

use super::auth;
use super::handover;
use super::inbound::{self, Inbound, Verb};
use super::legacy;
use super::reply;
use crate::methods;
use crate::rpc::{Kind, Method, Reply};
use crate::state::AppState;
use crate::telemetry::records::CallRecord;

/// The MCP endpoint: a request whose body the protection layers (`layers::guard`) have
/// already read within `server.max_body_bytes`. `arrived`: when its head was in (the
/// guard's clock read, which times the request from there on).
pub async fn handle(state: &Arc<AppState>, parts: &Parts, bytes: Bytes, arrived: Instant) -> Response {
    let headers = &parts.headers;
    // Refusals before dispatch are counted by reason (`mcp_server_rejected_total`).
    let refuse = |r: inbound::Rejection| {
        state.metrics.rejected(r.error.kind.as_str());
        reply::error(r.id.as_ref(), &r.error)
    };
    let verb = match inbound::precheck(&state.server, parts) {
        Ok(v) => v,
        Err(r) => return refuse(r),
    };
    // `server.path` or a virtual endpoint (`[[endpoints]]`): the registry it serves from.
    let registry = state.registry.load_full();
    let registry = if parts.uri.path() == state.server.path {
        registry
    } else {
        match registry.endpoint(parts.uri.path()) {
            Some(r) => Arc::clone(r),
            None => return axum::http::StatusCode::NOT_FOUND.into_response(),
        }
    };
    // Authentication comes first, before any JSON-RPC processing (MCP 2026-07-28 basic/authorization, our choice where the spec leaves it open).
    let auth = state.auth.load();
    let path = parts.uri.path();
    let identity = match auth::authenticate(auth.as_deref(), &parts.uri, headers, arrived).await {
        Ok(identity) => identity,
        Err(rejected) => {
            state.metrics.rejected(Kind::Unauthorized.as_str());
            return auth::unauthorized(auth.as_deref(), &rejected, path);
        }
    };
    // A virtual endpoint's own audience and scopes.
    if let Some(res) = auth::endpoint_terms(auth.as_deref(), identity.as_ref(), path) {
        state.metrics.rejected(if res.status() == 401 { Kind::Unauthorized } else { Kind::Forbidden }.as_str());
        return res;
    }
    // A call an access rule refuses is recorded too (its log line, the audit trail).
    let deny = |res: Response, method: &str, name: &str| {
        state.metrics.rejected(Kind::Forbidden.as_str());
        if let Some(records) = state.records.get() {
            let caller = identity.as_ref().map(mcp_adapter_api::Identity::key_arc);
            let request_id = crate::telemetry::request_id(headers);
            let reason = "an access rule refused this caller (the log names the missing scopes or claims)";
            if let Some(r) = CallRecord::refused(method, name, caller, request_id, reason) {
                records.submit(r);
            }
        }
        res
    };
    let denial = |id, method: &str, name: &str| {
        auth::denial(auth.as_deref(), identity.as_ref(), id, &registry, (method, name), path)
    };
    // The access rule (when any item has one), decided from the routing headers before the
    // body is read ...
    let ruled = auth.as_deref().is_some_and(|a| !a.config().rules.is_empty());
    if ruled
        && let Some((method, name)) = auth::named_by_headers(headers)
        && let Some(res) = denial(None, method, &name)
    {
        return deny(res, method, &name);
    }
    let accepts = match verb {
        Verb::Post(accepts) => accepts,
        Verb::Get => return legacy::get(state, &registry, headers, identity.as_ref()).await,
        Verb::Delete => return legacy::delete(),
    };
    match inbound::parse(&registry, headers, &bytes, accepts) {
        Ok(Inbound::Notification) => reply::render(Reply::Accepted),
        Ok(Inbound::Request(mut req)) => {
            // Search mode's `call_tool` is the call of the tool it names from here on.
            if let Err(e) = methods::unwrap_call(&registry, req.method.name(), &mut req.params) {
                return reply::error(Some(&req.id), &e);
            }
            // ... and again from the body, which a header cannot stand in for.
            if ruled {
                let name = auth::named(req.method.name(), &req.params).unwrap_or_default();
                if let Some(res) = denial(Some(&req.id), req.method.name(), &name) {
                    return deny(res, req.method.name(), &name);
                }
            }
            let listen = req.method == Method::Listen;
            // Boxed once here: the protection stack above (`layers::guard`, `admitted`) moves
            // its futures on every request, and this is what would make them large.
            let answer = Box::pin(methods::dispatch(state, registry, headers, req, identity, arrived)).await;
            // An open listen stream is long-lived; a refused one is an ordinary error.
            let stream = listen && matches!(answer, Reply::Stream(_));
            let res = reply::render(answer);
            if stream { handover::long_lived(res) } else { res }
        }
        // Boxed: the 2025-era leg's future is larger than the modern path's, and the request
        // future that embeds it is moved through every layer on each request of either era.
        Ok(Inbound::Legacy(message)) => {
            Box::pin(legacy::post(state, registry, headers, message, accepts, identity)).await
        }
        Err(r) => refuse(r),
    }
}
