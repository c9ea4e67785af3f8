//! The 2025-era leg of the one endpoint (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility): `initialize`, stateless sessions, removed methods, 2025-11-25 shapes, server-to-client requests, the GET stream.

mod ask;
mod convert;
mod listen;
mod prefs;
pub mod session;

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcp_adapter_api::Identity;
use mcp_protocol::{RequestId, headers as h, meta, version};
use serde_json::{Map, Value, json};

use super::reply;
use crate::cluster::relay::Delivery;
use crate::registry::Registry;
use crate::rpc::{Accepts, Envelope, Kind, Method, RpcError, response};
use crate::state::AppState;
use session::{Opened, Refused, Session};

/// The log level of a 2025-era session that never sent `logging/setLevel` on this replica (`info`).
const DEFAULT_LOG_LEVEL: usize = 1;

/// The era of a message, from the body first (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility): a
/// `_meta` protocol-version claim is modern (a malformed envelope behind it stays a modern
/// error); `initialize` without one, a JSON-RPC response, or a message with neither a claim
/// nor a modern `MCP-Protocol-Version` header is 2025-era.
pub fn is_legacy(headers: &HeaderMap, msg: &Map<String, Value>) -> bool {
    let meta = msg.get("params").and_then(|p| p.get("_meta"));
    if meta.is_some_and(|m| m.get(meta::PROTOCOL_VERSION).is_some()) {
        return false;
    }
    match msg.get("method") {
        None => msg.contains_key("result") || msg.contains_key("error"),
        Some(m) if m == "initialize" => true,
        Some(_) => !headers.get(h::PROTOCOL_VERSION).and_then(|v| v.to_str().ok()).is_some_and(version::is_supported),
    }
}

/// A POSTed 2025-era message, already read as a tree by `inbound::parse`.
pub async fn post(
    state: &Arc<AppState>,
    registry: Arc<Registry>,
    headers: &HeaderMap,
    mut msg: Map<String, Value>,
    accepts: Accepts,
    identity: Option<Identity>,
) -> Response {
    let principal = identity.as_ref().map(|i| i.key());
    let id = match msg.get("id").map(RequestId::from_value) {
        None => None,
        Some(Some(id)) => Some(id),
        Some(None) => return invalid(None, "Invalid Request: id must be a string or an integer (not null)"),
    };
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.as_ref(), "Invalid Request: jsonrpc must be \"2.0\"");
    }
    let method = match msg.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return invalid(id.as_ref(), "Invalid Request: method must be a string"),
        // A JSON-RPC response: the client's answer to one of our requests (MCP 2025-11-25 basic/transports § Sending Messages to the Server).
        None => {
            let opened = match open(state, &registry, headers, principal) {
                Ok(o) => o,
                Err(r) => return *r,
            };
            if let Some(RequestId::Str(question)) = &id {
                let delivery = state.relay.answer(question, &opened.digest, Value::Object(msg)).await;
                if delivery == Delivery::Unroutable {
                    // The asking call ends with a tool error when its wait runs out.
                    tracing::warn!(id = %question, "a 2025-era client's answer belongs to another replica and there is no [redis] to reach it");
                }
            }
            return reply::accepted();
        }
    };
    let params = match msg.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return invalid(id.as_ref(), "Invalid Request: params must be an object"),
    };
    let Some(id) = id else {
        // Notifications (`notifications/initialized`, cancellations): accepted; nothing to keep.
        if headers.contains_key(session::HEADER)
            && let Err(r) = open(state, &registry, headers, principal)
        {
            return *r;
        }
        return reply::accepted();
    };
    if method == "initialize" {
        return initialize(state, &registry, &id, &params, principal);
    }
    let opened = match open(state, &registry, headers, principal) {
        Ok(o) => o,
        Err(r) => return *r,
    };
    if let Some(v) = headers.get(h::PROTOCOL_VERSION)
        && !v.to_str().is_ok_and(|v| version::LEGACY_SERVED.contains(&v))
    {
        return invalid(Some(&id), "Bad Request: unsupported MCP-Protocol-Version for this session");
    }
    request(state, registry, headers, id, &method, params, accepts, identity, opened).await
}

/// `initialize` as a pure function: negotiate the revision, seal the session (MCP 2025-11-25 basic/lifecycle § Initialization).
fn initialize(
    state: &AppState,
    registry: &Registry,
    id: &RequestId,
    params: &Map<String, Value>,
    principal: Option<&str>,
) -> Response {
    let version = version::negotiate_legacy(params.get("protocolVersion").and_then(Value::as_str));
    let capabilities = params.get("capabilities").filter(|c| c.is_object()).cloned().unwrap_or_else(|| json!({}));
    let session = Session {
        version: version.to_owned(),
        capabilities,
        client_info: params.get("clientInfo").cloned().unwrap_or(Value::Null),
        principal: principal.map(session::digest),
        endpoint: registry.endpoint.as_deref().map(str::to_owned),
        exp: session::expiry(),
    };
    let Some(token) = session::mint(&state.sealer.load(), &session) else {
        let err = RpcError::new(
            Kind::InvalidEnvelope,
            format!("Invalid params: capabilities and clientInfo together exceed {} bytes", session::MAX_PLAINTEXT),
        );
        return reply::error(Some(id), &err);
    };
    tracing::debug!(caller = principal.unwrap_or("-"), version, "a 2025-era session opened");
    let discover: Value = serde_json::from_str(registry.discover.get()).unwrap_or_default();
    let mut capabilities = discover.get("capabilities").cloned().unwrap_or_else(|| json!({}));
    if let Some(c) = capabilities.as_object_mut() {
        c.remove("extensions");
    }
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": registry.server_info.info(),
    });
    if let Some(i) = discover.get("instructions") {
        result["instructions"] = i.clone();
    }
    let mut res = reply::json(StatusCode::OK, response::success(id, &result));
    res.headers_mut().insert(session::HEADER, HeaderValue::from_str(&token).expect("visible ASCII token"));
    res
}

/// A request inside a session.
#[allow(clippy::too_many_arguments)]
async fn request(
    state: &Arc<AppState>,
    registry: Arc<Registry>,
    headers: &HeaderMap,
    id: RequestId,
    name: &str,
    mut params: Map<String, Value>,
    accepts: Accepts,
    identity: Option<Identity>,
    opened: Opened,
) -> Response {
    let empty = || reply::json(StatusCode::OK, response::success(&id, &json!({})));
    match name {
        "ping" => return empty(),
        "logging/setLevel" => {
            let level = params.get("level").and_then(Value::as_str);
            let Some(rank) = level.and_then(|l| meta::LOG_LEVELS.iter().position(|x| *x == l)) else {
                let err = format!("Invalid params: level must be one of {}", meta::LOG_LEVELS.join(", "));
                return in_band(&id, &RpcError::invalid_params(err));
            };
            prefs::set_level(state, &opened.digest, rank).await;
            return empty();
        }
        "resources/subscribe" | "resources/unsubscribe" if registry.capabilities.resources => {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return in_band(&id, &RpcError::invalid_params(format!("Invalid params: {name} needs params.uri")));
            };
            prefs::subscribe(state, &opened.digest, uri, name == "resources/subscribe").await;
            return empty();
        }
        _ => {}
    }
    let method = Method::from_name(name).filter(|m| served(*m) && registry.capabilities.advertises(*m));
    let Some(method) = method else {
        return in_band(&id, &RpcError::new(Kind::MethodNotFound, format!("Method not found: {name}")));
    };
    if let Err(e) = crate::methods::unwrap_call(&registry, name, &mut params) {
        return in_band(&id, &e);
    }
    // The same access rules as the 2026-07-28 leg, from the body (2025-era clients send no routing headers).
    let auth = state.auth.load();
    let target = if auth.is_some() { super::auth::named(name, &params).unwrap_or_default() } else { String::new() };
    let path = registry.endpoint.as_deref().unwrap_or(&state.server.path);
    if let Some(res) =
        super::auth::denial(auth.as_deref(), identity.as_ref(), Some(&id), &registry, (name, &target), path)
    {
        state.metrics.rejected(Kind::Forbidden.as_str());
        return res;
    }
    let meta = match params.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let text = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_owned);
    let traceparent = text(meta::TRACEPARENT);
    let log_level = prefs::level(state, &opened.digest).await.unwrap_or(DEFAULT_LOG_LEVEL);
    let envelope = Envelope {
        protocol_version: opened.session.version.clone(),
        client_capabilities: opened.session.capabilities.clone(),
        progress_token: meta.get(meta::PROGRESS_TOKEN).filter(|t| t.is_string() || t.is_i64() || t.is_u64()).cloned(),
        log_level: Some(log_level),
        tracestate: traceparent.as_ref().and(text(meta::TRACESTATE)),
        traceparent,
        baggage: text(meta::BAGGAGE),
        client: crate::rpc::client::of_value(&opened.session.client_info),
        legacy: true,
    };
    let call = ask::Call {
        state: Arc::clone(state),
        registry,
        headers: headers.clone(),
        identity,
        digest: opened.digest,
        id,
        method,
        params,
        envelope,
        accepts,
    };
    ask::respond(call).await
}

/// The modern methods a 2025-era client may call (the rest are 2026-07-28 only: the
/// extensions' methods among them, as `initialize` declares no extension).
fn served(method: Method) -> bool {
    !matches!(
        method,
        Method::Discover
            | Method::Listen
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel
            | Method::SkillsList
            | Method::SkillsGet
            | Method::DirectoryRead
    )
}

/// The request's session, or the response refusing it: 400 without one, 404 for one we cannot honour (MCP 2025-11-25 basic/transports § Session Management).
fn open(
    state: &AppState,
    registry: &Registry,
    headers: &HeaderMap,
    principal: Option<&str>,
) -> Result<Opened, Box<Response>> {
    session::open(&state.sealer.load(), headers, principal, registry.endpoint.as_deref()).map_err(|r| {
        // Counted with the other refusals before dispatch (`mcp_server_rejected_total`).
        state.metrics.rejected(match r {
            Refused::Missing => "session_missing",
            Refused::Invalid => "session_not_found",
        });
        Box::new(refused(r))
    })
}

/// The response refusing a session.
fn refused(r: Refused) -> Response {
    match r {
        Refused::Missing => invalid(
            None,
            "Bad Request: no Mcp-Session-Id (2025-era clients: send initialize first) and no _meta protocolVersion (MCP 2026-07-28)",
        ),
        Refused::Invalid => {
            let body = response::error(
                None,
                &RpcError::new(
                    Kind::InvalidRequest,
                    "Session not found: this Mcp-Session-Id is invalid or expired; send initialize again",
                ),
            );
            (StatusCode::NOT_FOUND, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
        }
    }
}

/// 400 `-32600`.
fn invalid(id: Option<&RequestId>, message: &str) -> Response {
    reply::error(id, &RpcError::new(Kind::InvalidRequest, message))
}

/// A JSON-RPC error in band (200): on this leg a 404 means "session gone" to the client.
fn in_band(id: &RequestId, err: &RpcError) -> Response {
    reply::json(StatusCode::OK, response::error(Some(id), err))
}

/// `GET`: the session's stream of list changes and resource updates.
pub async fn get(
    state: &Arc<AppState>,
    registry: &Registry,
    headers: &HeaderMap,
    identity: Option<&Identity>,
) -> Response {
    let caller = identity.map(|i| i.key());
    match open(state, registry, headers, caller) {
        Ok(opened) => match state.streams.acquire(caller) {
            Ok(slot) => {
                let path = registry.endpoint.as_deref().unwrap_or(&state.server.path);
                listen::stream(state, path, opened.digest, slot)
            }
            Err(refused) => reply::error(None, &crate::methods::stream_refused(refused)),
        },
        Err(r) => *r,
    }
}

/// `DELETE`: 405 — a sealed session holds no state to drop and cannot be revoked before it expires (MCP 2025-11-25 basic/transports § Session Management allows 405).
pub fn delete() -> Response {
    let err = RpcError::new(
        Kind::MethodNotAllowed,
        "Method Not Allowed: sessions are stateless here and end by expiring; just stop using the Mcp-Session-Id",
    );
    reply::error(None, &err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_comes_from_the_body_first() {
        let msg = |v: Value| match v {
            Value::Object(m) => m,
            _ => unreachable!("objects only"),
        };
        let none = HeaderMap::new();
        let mut modern_header = HeaderMap::new();
        modern_header.insert(h::PROTOCOL_VERSION, HeaderValue::from_static("2026-07-28"));
        let mut old_header = HeaderMap::new();
        old_header.insert(h::PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        let claim = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}});
        for (body, headers, legacy) in [
            (json!({"method": "initialize", "params": {"protocolVersion": "2025-11-25"}}), &none, true),
            (json!({"method": "initialize", "params": claim}), &none, false),
            (json!({"method": "tools/list", "params": claim}), &old_header, false),
            (json!({"method": "tools/list"}), &none, true),
            (json!({"method": "tools/list"}), &old_header, true),
            (json!({"method": "tools/list"}), &modern_header, false),
            (json!({"method": "initialize"}), &modern_header, true),
            (json!({"id": "rt.a.b", "result": {}}), &modern_header, true),
            (json!({"id": 1, "error": {}}), &none, true),
            (json!({"id": 1}), &none, false),
        ] {
            assert_eq!(is_legacy(headers, &msg(body.clone())), legacy, "{body} with {headers:?}");
        }
    }
}
