//! The checks on an inbound POST, in the order of MCP 2026-07-28 basic/transports/streamable-http § Sending messages to the server; the first failure answers.
//! Steps 1–3 run before the body is read ([`precheck`]), steps 4–11 on the body ([`parse`]);
//! the method handlers do 12–14 because they need the method's params.

use std::borrow::Cow;

use axum::http::request::Parts;
use axum::http::{HeaderMap, Method as HttpMethod, Uri, Version, header};
use mcp_protocol::{RequestId, version};
use serde_json::{Map, Value};

use crate::config::ServerConfig;
use crate::registry::Registry;
use crate::rpc::envelope::{self, Envelope};
use crate::rpc::headers::{self, single};
use crate::rpc::read;
use crate::rpc::{Accepts, Kind, Method, Request, RpcError};

/// A refused request: the error and, once it could be read, the request id to echo.
#[derive(Debug)]
pub struct Rejection {
    /// The id to echo (MCP 2026-07-28 basic § Messages: every error echoes the id when it could be read).
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: RpcError,
}

impl From<RpcError> for Rejection {
    fn from(error: RpcError) -> Self {
        Self { id: None, error }
    }
}

/// What the body turned out to be.
#[derive(Debug)]
pub enum Inbound {
    /// A request to dispatch (boxed: it is much larger than the other variant).
    Request(Box<Request>),
    /// A notification: accepted and dropped (MCP 2026-07-28 basic/transports/streamable-http § Notifications, our choice where the spec leaves it open).
    Notification,
    /// A 2025-era message (no `_meta` version claim): served by [`super::legacy`] from the tree already read.
    Legacy(Map<String, Value>),
}

/// What the HTTP method asks for.
#[derive(Debug, Clone, Copy)]
pub enum Verb {
    /// A POSTed message.
    Post(Accepts),
    /// A 2025-era GET stream (`Accept: text/event-stream` checked).
    Get,
    /// A 2025-era session termination.
    Delete,
}

/// Steps 1–3: Origin/authority (403), HTTP method (405), Content-Type (415), Accept (406).
pub fn precheck(server: &ServerConfig, parts: &Parts) -> Result<Verb, Rejection> {
    let (method, headers) = (&parts.method, &parts.headers);
    // 1. DNS-rebinding defence (MCP 2026-07-28 basic/transports/streamable-http § Security warning (Origin)): Origin when present, and Host.
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| server.origins.allows(o));
        if !allowed {
            tracing::warn!(
                origin = ?origin,
                "refused a request from this Origin: add it to server.allowed_origins (MCP_RUNTIME__SERVER__ALLOWED_ORIGINS) if browsers on that page may call"
            );
            return Err(RpcError::new(
                Kind::Forbidden,
                "Forbidden: this Origin is not allowed (server.allowed_origins)",
            )
            .into());
        }
    }
    let host = authority(parts.version, &parts.uri, headers)?;
    if !server.hosts.allows(host) {
        tracing::warn!(
            host,
            "refused a request for this Host: add the name clients use to server.allowed_hosts (MCP_RUNTIME__SERVER__ALLOWED_HOSTS)"
        );
        return Err(RpcError::new(Kind::Forbidden, "Forbidden: this Host is not allowed (server.allowed_hosts)").into());
    }
    // 2. POST; GET and DELETE only for 2025-era sessions (MCP 2025-11-25 basic/transports § Listening for Messages from the Server, § Session Management).
    if method == HttpMethod::GET {
        if !accepts(headers).1 || headers.get(header::ACCEPT).is_none() {
            return Err(RpcError::new(
                Kind::NotAcceptable,
                "Not Acceptable: a GET stream needs Accept: text/event-stream (MCP 2025-11-25 basic/transports)",
            )
            .into());
        }
        return Ok(Verb::Get);
    }
    if method == HttpMethod::DELETE {
        return Ok(Verb::Delete);
    }
    if method != HttpMethod::POST {
        return Err(RpcError::new(
            Kind::MethodNotAllowed,
            format!("Method Not Allowed: the MCP endpoint accepts POST (and GET for 2025-era sessions), not {method}"),
        )
        .into());
    }
    // 3. Content-Type and Accept.
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !media_type_is(content_type, "application/json") {
        return Err(RpcError::new(
            Kind::UnsupportedMediaType,
            "Unsupported Media Type: send the body as Content-Type: application/json",
        )
        .into());
    }
    let (json, sse) = accepts(headers);
    if !json {
        return Err(RpcError::new(
            Kind::NotAcceptable,
            "Not Acceptable: the Accept header must include application/json (and text/event-stream for streamed answers)",
        )
        .into());
    }
    Ok(Verb::Post(Accepts { sse }))
}

/// The authority the client addressed: the URI's authority (HTTP/2 `:authority`, RFC 9113
/// §8.3.1, or an HTTP/1.1 absolute-form target, RFC 9112 §3.2.2), else the `Host` header
/// (RFC 9112 §3.2). HTTP/2 clients need not send `Host`; when one comes with a different
/// `:authority` the request is malformed, and an HTTP/1.x request without any authority is
/// refused: both 400, since the DNS-rebinding check cannot be made without it. More than one
/// `Host` field line is a 400 too, in any version: RFC 9112 §3.2 ("A server MUST respond with a
/// 400 ... to any request message that contains more than one Host header field line").
pub fn authority<'a>(version: Version, uri: &'a Uri, headers: &'a HeaderMap) -> Result<&'a str, RpcError> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err(RpcError::new(
            Kind::InvalidRequest,
            "Bad Request: more than one Host header field line (RFC 9112 §3.2)",
        ));
    }
    let host = match first.map(|h| h.to_str()) {
        None => None,
        Some(Ok(h)) => Some(h),
        Some(Err(_)) => {
            return Err(RpcError::new(Kind::InvalidRequest, "Bad Request: the Host header is not visible ASCII"));
        }
    };
    match (uri.authority(), host) {
        (Some(uri), Some(host)) if version == Version::HTTP_2 && !uri.as_str().eq_ignore_ascii_case(host) => {
            Err(RpcError::new(
                Kind::InvalidRequest,
                format!("Bad Request: the Host header ({host}) disagrees with :authority ({uri}) (RFC 9113 §8.3.1)"),
            ))
        }
        (Some(uri), _) => Ok(uri.as_str()),
        (None, Some(host)) => Ok(host),
        (None, None) => Err(RpcError::new(
            Kind::InvalidRequest,
            "Bad Request: the request names no host (send a Host header, RFC 9112 §3.2)",
        )),
    }
}

/// The differential check of the typed read (`rpc::read`) against the `Value` path: `Ok(true)`
/// when the typed read accepts `body` and the `Value` path reads the same request out of it,
/// `Ok(false)` when the typed read leaves it to the `Value` path, `Err` saying how they
/// disagree. The unit tests and the fuzz targets call it.
pub fn typed_read_agrees(headers: &HeaderMap, body: &[u8]) -> Result<bool, String> {
    let Some(fast) = read::request(body) else { return Ok(false) };
    let text = String::from_utf8_lossy(body);
    let reference = match shape(headers, body) {
        Ok(Shape::Modern(r)) => *r,
        Ok(Shape::Notification) => return Err(format!("typed read accepted a notification: {text}")),
        Ok(Shape::Legacy(_)) => return Err(format!("typed read accepted a 2025-era message: {text}")),
        Err(r) => return Err(format!("typed read accepted what the Value path refuses ({}): {text}", r.error.message)),
    };
    let same = fast.id == reference.id
        && fast.method == reference.method_name
        && fast.params == reference.params
        && format!("{:?}", fast.envelope) == format!("{:?}", reference.envelope);
    if same { Ok(true) } else { Err(format!("typed read and Value path read different requests: {text}")) }
}

/// Steps 4–11: parse, shape, envelope, header/body agreement, version, method.
pub fn parse(registry: &Registry, headers: &HeaderMap, body: &[u8], accepts: Accepts) -> Result<Inbound, Rejection> {
    // 4–7. The common case in one typed pass; anything else, refusals included, is read
    // as a `Value` tree, the path that words every refusal (`rpc::read` says why both agree).
    let Shaped { id, method_name, params, envelope, header_version } = match read::request(body) {
        Some(r) => {
            let header_version = single(headers, &headers::PROTOCOL_VERSION)
                .map_err(|error| Rejection { id: Some(r.id.clone()), error })?;
            let read::Request { id, method, params, envelope } = r;
            Shaped { id, method_name: method, params, envelope, header_version }
        }
        None => match shape(headers, body)? {
            Shape::Modern(shaped) => *shaped,
            Shape::Notification => return Ok(Inbound::Notification),
            Shape::Legacy(message) => return Ok(Inbound::Legacy(message)),
        },
    };
    let reject = |error: RpcError| Rejection { id: Some(id.clone()), error };
    // 8. Headers that disagree with the body.
    if let Some(h) = header_version
        && h != envelope.protocol_version
    {
        return Err(reject(RpcError::header_mismatch(format!(
            "Header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{}'",
            envelope.protocol_version
        ))));
    }
    let header_method = single(headers, &headers::METHOD).map_err(reject)?;
    if let Some(h) = header_method
        && h != method_name
    {
        return Err(reject(RpcError::header_mismatch(format!(
            "Header mismatch: Mcp-Method header value '{h}' does not match body value '{method_name}'"
        ))));
    }
    // 9. Version served?
    if !version::is_supported(&envelope.protocol_version) {
        return Err(reject(envelope::unsupported_version(&envelope.protocol_version)));
    }
    // 10. Required headers present.
    if header_version.is_none() {
        return Err(reject(RpcError::header_mismatch(format!(
            "Header mismatch: the MCP-Protocol-Version header is required (send MCP-Protocol-Version: {})",
            envelope.protocol_version
        ))));
    }
    if header_method.is_none() {
        return Err(reject(RpcError::header_mismatch(format!(
            "Header mismatch: the Mcp-Method header is required (send Mcp-Method: {method_name})"
        ))));
    }
    let method = Method::from_name(&method_name);
    if let Some(field) = method.and_then(Method::routing_param) {
        check_name(headers, params.get(field), field).map_err(reject)?;
    }
    // 11. Method lookup: unknown, removed, or behind a capability we do not advertise.
    let method =
        method.filter(|m| registry.capabilities.advertises(*m)).ok_or_else(|| reject(not_found(&method_name)))?;
    Ok(Inbound::Request(Box::new(Request { id, method, params, envelope, accepts })))
}

/// A request after steps 4–7, and its `MCP-Protocol-Version` header.
struct Shaped<'b, 'h> {
    id: RequestId,
    method_name: Cow<'b, str>,
    params: Map<String, Value>,
    envelope: Envelope,
    header_version: Option<&'h str>,
}

/// A body read as a `Value` tree.
enum Shape<'b, 'h> {
    /// A modern request after steps 4–7.
    Modern(Box<Shaped<'b, 'h>>),
    /// A modern notification.
    Notification,
    /// A 2025-era message.
    Legacy(Map<String, Value>),
}

/// Steps 4–7 on a `Value` tree: parse, shape, era, the `MCP-Protocol-Version` header, envelope.
fn shape<'b, 'h>(headers: &'h HeaderMap, body: &'b [u8]) -> Result<Shape<'b, 'h>, Rejection> {
    // 4. Parse (serde_json also rejects invalid UTF-8 and nesting deeper than 128).
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::new(Kind::Parse, format!("Parse error: the body is not valid JSON ({e})")))?;
    // 5. Shape: one request or notification object.
    let Value::Object(mut msg) = value else {
        let message = if value.is_array() {
            "Invalid Request: JSON-RPC batches are not supported; send one request per POST"
        } else {
            "Invalid Request: the body must be one JSON-RPC request object"
        };
        return Err(RpcError::new(Kind::InvalidRequest, message).into());
    };
    if super::legacy::is_legacy(headers, &msg) {
        return Ok(Shape::Legacy(msg));
    }
    let id = match msg.get("id") {
        None => None,
        Some(v) => Some(RequestId::from_value(v).ok_or_else(|| {
            RpcError::new(Kind::InvalidRequest, "Invalid Request: id must be a string or an integer (not null)")
        })?),
    };
    let reject = |error: RpcError| Rejection { id: id.clone(), error };
    let method_name = match msg.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return Err(reject(RpcError::new(Kind::InvalidRequest, "Invalid Request: method must be a string")));
        }
        None if msg.contains_key("result") || msg.contains_key("error") => {
            return Err(reject(RpcError::new(
                Kind::InvalidRequest,
                "Invalid Request: this server sends no requests, so it accepts no JSON-RPC responses",
            )));
        }
        None => {
            return Err(reject(RpcError::new(Kind::InvalidRequest, "Invalid Request: method is missing")));
        }
    };
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(RpcError::new(Kind::InvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"")));
    }
    let mut params = match msg.remove("params") {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => {
            return Err(reject(RpcError::new(Kind::InvalidRequest, "Invalid Request: params must be an object")));
        }
    };
    let Some(id) = id else {
        // Notifications: accepted and dropped; header rules for them are undefined (MCP 2026-07-28 basic/transports/streamable-http § Notifications, m.15).
        return Ok(Shape::Notification);
    };
    let reject = |error: RpcError| Rejection { id: Some(id.clone()), error };

    let header_version = single(headers, &headers::PROTOCOL_VERSION).map_err(reject)?;
    // 7. Envelope (it refuses a request without params, so `params` is there after it).
    let envelope = envelope::take(&method_name, params.as_mut(), header_version).map_err(reject)?;
    let params = params.unwrap_or_default();
    Ok(Shape::Modern(Box::new(Shaped { id, method_name: Cow::Owned(method_name), params, envelope, header_version })))
}

/// `Mcp-Name` must equal the body's routing value when the body has one (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).
fn check_name(headers: &HeaderMap, body: Option<&Value>, field: &str) -> Result<(), RpcError> {
    // A body without a string value is a params error, reported by the method (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).
    let Some(expected) = body.and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(raw) = single(headers, &headers::NAME)? else {
        return Err(RpcError::header_mismatch(format!(
            "Header mismatch: the Mcp-Name header is required and must equal params.{field} ('{expected}')"
        )));
    };
    let got = headers::decode(raw, "Mcp-Name")?;
    if got != expected {
        return Err(RpcError::header_mismatch(format!(
            "Header mismatch: Mcp-Name header value '{got}' does not match body value '{expected}'"
        )));
    }
    Ok(())
}

fn not_found(method: &str) -> RpcError {
    let hint = match method {
        "initialize" | "notifications/initialized" => {
            " (removed in 2026-07-28: send _meta on every request; server/discover describes the server)"
        }
        "ping" => " (removed in 2026-07-28: use the HTTP health endpoints)",
        "logging/setLevel" => " (removed in 2026-07-28: send _meta io.modelcontextprotocol/logLevel per request)",
        "resources/subscribe" | "resources/unsubscribe" => {
            " (removed in 2026-07-28: use subscriptions/listen with resourceSubscriptions)"
        }
        _ => "",
    };
    RpcError::new(Kind::MethodNotFound, format!("Method not found: {method}{hint}"))
}

/// True when a Content-Type value names `want` (parameters such as charset are ignored).
fn media_type_is(value: &str, want: &str) -> bool {
    value.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case(want))
}

/// `(json, sse)` acceptability from `Accept` (absent means anything).
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let values = headers.get_all(header::ACCEPT);
    let mut each = values.iter();
    match (each.next(), each.next()) {
        (None, _) => return (true, true),
        // What clients are told to send (MCP 2026-07-28 basic/transports § Sending Messages
        // to the Server), the usual case: one comparison instead of the media ranges parsed.
        (Some(one), None) if one.as_bytes() == b"application/json, text/event-stream" => return (true, true),
        _ => {}
    }
    let (mut json, mut sse) = (false, false);
    // Bytes compared in place, case-insensitively: no UTF-8 check and no lower-cased copy per
    // media range (a range with other bytes matches none of these names anyway).
    let is = |t: &[u8], names: &[&[u8]]| names.iter().any(|n| t.eq_ignore_ascii_case(n));
    for range in values.iter().flat_map(|v| v.as_bytes().split(|b| *b == b',')) {
        let t = range.split(|b| *b == b';').next().unwrap_or_default().trim_ascii();
        if t == b"*/*" {
            (json, sse) = (true, true);
        } else if is(t, &[b"application/json", b"application/*"]) {
            json = true;
        } else if is(t, &[b"text/event-stream", b"text/*"]) {
            sse = true;
        }
    }
    (json, sse)
}

#[cfg(test)]
mod tests;
