//! CORS for browser clients (web MCP clients, the MCP Inspector's direct connection): the
//! preflight and the response headers, driven by the same `server.allowed_origins` list as
//! the DNS-rebinding check (MCP 2026-07-28 basic/transports/streamable-http § Security
//! warning (Origin)), so an origin is either allowed for both or refused by both. An origin
//! that is not allowed gets no `Access-Control-Allow-Origin`, so its page cannot read any
//! answer (and its requests get the endpoint's 403).

use std::time::Duration;

use axum::http::{HeaderName, Method};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

use crate::config::OriginPolicy;

/// Response headers a browser client must be able to read: the 2025-era session id, the
/// authentication challenge (RFC 6750 §3) and the rate limiter's back-off.
const EXPOSED: [&str; 3] = ["mcp-session-id", "www-authenticate", "retry-after"];

/// How long a browser may cache a preflight answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// The CORS layer for the MCP endpoint and the protected-resource metadata.
///
/// Request headers are mirrored from the preflight rather than listed: besides the fixed
/// MCP headers (`Mcp-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Session-Id`,
/// `Authorization`, `Last-Event-ID`) clients send one `Mcp-Param-<name>` per annotated tool
/// parameter, whose names no fixed list can hold; the endpoint validates every header it
/// reads, and only allowed origins get an answer they can use.
pub fn layer(origins: &OriginPolicy) -> CorsLayer {
    let origins = origins.clone();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| origin.to_str().is_ok_and(|o| origins.allows(o))))
        .allow_methods([Method::POST, Method::GET, Method::DELETE])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(EXPOSED.map(HeaderName::from_static))
        .max_age(PREFLIGHT_MAX_AGE)
}
