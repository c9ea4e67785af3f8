//! Authentication and authorization at the MCP endpoint (MCP 2026-07-28 basic/authorization):
//! every request proves who it is before any JSON-RPC processing ([`Authenticator`] decides),
//! refusals carry the challenges of RFC 6750 §3 and RFC 9728 §5.1, and the access rule of the
//! named tool, prompt or resource is checked from the `Mcp-Method` / `Mcp-Name` headers before
//! the body is parsed, then again against the parsed body.

use std::borrow::Cow;
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use mcp_adapter_api::Identity;
use serde_json::{Map, Value, json};

use crate::auth::policy::{self, Denied};
use crate::auth::{Authenticator, Rejection};
use crate::registry::Registry;
use mcp_protocol::RequestId;

use crate::rpc::{Kind, RpcError, headers, response};

/// The caller (`None` when authentication is off), or why not. `now`: when the request
/// arrived (a token seen before is judged by it).
pub async fn authenticate(
    auth: Option<&Authenticator>,
    uri: &Uri,
    headers: &HeaderMap,
    now: Instant,
) -> Result<Option<Identity>, Rejection> {
    let Some(auth) = auth else { return Ok(None) };
    // RFC 6750 §2.3 query tokens leak into logs and histories; MCP allows only the header.
    if uri.query().is_some_and(|q| q.split('&').any(|p| p.starts_with("access_token="))) {
        return Err(Rejection::InQuery);
    }
    let mut credentials = headers.get_all(header::AUTHORIZATION).iter();
    let credential = credentials.next();
    if credential.is_some() && credentials.next().is_some() {
        return Err(Rejection::Ambiguous);
    }
    // `Bearer <token>` (RFC 6750 §2.1; the scheme is case-insensitive), the token trimmed.
    let bearer = credential.and_then(|v| {
        let v = v.as_bytes();
        v.get(..7).filter(|s| s.eq_ignore_ascii_case(b"bearer ")).map(|_| v[7..].trim_ascii())
    });
    // A token this thread verified last is found by its bytes, before the ~700 of a JWT are
    // checked to be visible ASCII: those it remembers passed that check when verified.
    if let Some(identity) = bearer.and_then(|t| auth.recent(t, now)) {
        return Ok(Some(identity));
    }
    // Any other is a token only if the header is visible ASCII (`HeaderValue::to_str`).
    let token =
        bearer.filter(|_| credential.is_some_and(|v| v.to_str().is_ok())).and_then(|t| std::str::from_utf8(t).ok());
    // Boxed: verifying a token (JWKS, introspection) is a large future, and inline it would
    // make every request's future that large, authenticated or not.
    Box::pin(auth.authenticate(token)).await.map(Some)
}

/// The 401 answer with its challenge (RFC 6750 §3, RFC 9728 §5.1), logged once here.
pub fn unauthorized(auth: Option<&Authenticator>, rejected: &Rejection, endpoint: &str) -> Response {
    tracing::warn!(reason = rejected.reason(), error = %rejected, "bearer token refused");
    let config = auth.map(Authenticator::config);
    let mut challenge = String::from("Bearer realm=\"mcp\"");
    // Two credentials are a malformed request, not a bad token (RFC 6750 §3.1).
    if matches!(rejected, Rejection::Ambiguous) {
        challenge.push_str(", error=\"invalid_request\"");
        let err = RpcError::new(Kind::InvalidRequest, format!("Bad request: {rejected}"));
        return answer(StatusCode::BAD_REQUEST, None, &err, &challenge);
    }
    let err = RpcError::new(Kind::Unauthorized, format!("Unauthorized: {rejected}"));
    if rejected.had_token() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    if let Some(resource) = config.and_then(|a| a.resource_for(endpoint)) {
        challenge.push_str(&format!(", resource_metadata=\"{}\"", metadata_url(resource, endpoint)));
    }
    if let Some(scopes) = config.map(|a| a.scopes_supported.join(" ")).filter(|s| !s.is_empty()) {
        challenge.push_str(&format!(", scope=\"{scopes}\""));
    }
    answer(StatusCode::UNAUTHORIZED, None, &err, &challenge)
}

/// Checks the access rule of `method` on `name` (a tool or prompt name, a resource URI) as
/// `registry` serves it: a tool's rule is its catalog name's, whatever a virtual endpoint
/// calls it, and what a virtual endpoint does not serve is unknown there (the method answers
/// so), not forbidden. `None` when allowed; a denial is logged, counted by the caller, and answered with 403 `insufficient_scope`
/// naming every scope the operation needs (RFC 6750 §3.1, MCP 2026-07-28 basic/authorization § Scope Challenge Handling).
pub fn denial(
    auth: Option<&Authenticator>,
    identity: Option<&Identity>,
    id: Option<&RequestId>,
    registry: &Registry,
    (method, name): (&str, &str),
    endpoint: &str,
) -> Option<Response> {
    let auth = auth?;
    if registry.endpoint.is_some() && !registry.serves(method, name) {
        return None;
    }
    let rule_name = if method == "tools/call" { registry.catalog_name(name).unwrap_or(name) } else { name };
    let rule = policy::rule_for(&auth.config().rules, method, rule_name)?;
    let denied = policy::check(rule, identity).err()?;
    tracing::warn!(
        subject = identity.map(Identity::key),
        mcp.method.name = method,
        name,
        missing_scopes = %denied.missing.join(" "),
        failed_claims = %denied.claims.join(" "),
        "access denied"
    );
    Some(forbidden(auth, &denied, id, method, name, endpoint))
}

/// A virtual endpoint's own terms, once the caller is authenticated: a token meant for
/// another endpoint (its `aud` names only that endpoint's resource) is refused with 401, and
/// the endpoint's scopes are required (403 `insufficient_scope`). `path` is the request's
/// MCP path; nothing is checked when no endpoint is configured.
pub fn endpoint_terms(auth: Option<&Authenticator>, identity: Option<&Identity>, path: &str) -> Option<Response> {
    let (auth, identity) = (auth?, identity?);
    let config = auth.config();
    if config.endpoints.is_empty() {
        return None;
    }
    let audiences: Vec<&str> = match identity.claims.get("aud") {
        Some(Value::String(a)) => vec![a.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !config.audience_here(&audiences, path) {
        return Some(unauthorized(Some(auth), &Rejection::OtherEndpoint, path));
    }
    let terms = config.endpoints.get(path)?;
    let missing: Vec<String> = terms.scopes.iter().filter(|s| !identity.scopes.contains(s)).cloned().collect();
    if missing.is_empty() {
        return None;
    }
    tracing::warn!(
        subject = identity.key(),
        endpoint = path,
        missing_scopes = %missing.join(" "),
        "access denied: the endpoint's scopes"
    );
    let denied = Denied { required: terms.scopes.clone(), missing, claims: Vec::new() };
    Some(forbidden(auth, &denied, None, "requests to", path, path))
}

/// The item a parsed request names, for [`denial`]: `params.name` or `params.uri`.
pub fn named(method: &str, params: &Map<String, Value>) -> Option<String> {
    let key = if method.starts_with("resources/") || method == "skills/get" { "uri" } else { "name" };
    params.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The item the routing headers name, before the body is parsed (`None`: no usable headers;
/// the body check decides then).
pub fn named_by_headers(headers: &HeaderMap) -> Option<(&str, Cow<'_, str>)> {
    let method = headers::single(headers, &headers::METHOD).ok()??;
    let name = headers::single(headers, &headers::NAME).ok()??;
    Some((method, headers::decode(name, "Mcp-Name").ok()?))
}

fn forbidden(
    auth: &Authenticator,
    denied: &Denied,
    id: Option<&RequestId>,
    method: &str,
    name: &str,
    endpoint: &str,
) -> Response {
    let mut message = format!("Forbidden: {method} {name} needs");
    if !denied.missing.is_empty() {
        message.push_str(&format!(" the scopes {} (missing: {})", denied.required.join(" "), denied.missing.join(" ")));
    }
    if !denied.claims.is_empty() {
        message.push_str(&format!(" claims {}", denied.claims.join(", ")));
    }
    let err = RpcError::new(Kind::Forbidden, message);
    let mut challenge = String::from("Bearer error=\"insufficient_scope\"");
    if !denied.required.is_empty() {
        challenge.push_str(&format!(", scope=\"{}\"", denied.required.join(" ")));
    }
    if let Some(resource) = auth.config().resource_for(endpoint) {
        challenge.push_str(&format!(", resource_metadata=\"{}\"", metadata_url(resource, endpoint)));
    }
    answer(StatusCode::FORBIDDEN, id, &err, &challenge)
}

fn answer(status: StatusCode, id: Option<&RequestId>, err: &RpcError, challenge: &str) -> Response {
    let mut res = (status, [(header::CONTENT_TYPE, "application/json")], response::error(id, err)).into_response();
    if let Ok(v) = HeaderValue::from_str(challenge) {
        res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    res
}

/// `https://host/.well-known/oauth-protected-resource/<path>` for a resource `https://host/<path>`
/// (RFC 9728 §3.1: the well-known segment goes between host and path).
fn metadata_url(resource: &str, endpoint: &str) -> String {
    let origin_end = resource.find("://").map_or(0, |i| i + 3);
    let host_end = resource[origin_end..].find('/').map_or(resource.len(), |i| origin_end + i);
    format!("{}/.well-known/oauth-protected-resource{}", &resource[..host_end], endpoint)
}

/// The Protected Resource Metadata document (RFC 9728 §2), served unauthenticated with CORS
/// so browser clients can read it.
pub fn metadata(auth: Option<&Authenticator>, path: &str) -> Response {
    let Some(auth) = auth.map(Authenticator::config) else { return StatusCode::NOT_FOUND.into_response() };
    let mut body = json!({
        "resource": auth.resource_for(path),
        "authorization_servers": auth.authorization_servers,
        "bearer_methods_supported": ["header"],
        "resource_name": "mcp-runtime",
    });
    let mut scopes = auth.scopes_supported.clone();
    for s in auth.endpoints.get(path).map(|e| e.scopes.as_slice()).unwrap_or_default() {
        if !scopes.contains(s) {
            scopes.push(s.clone());
        }
    }
    if !scopes.is_empty() {
        body["scopes_supported"] = json!(scopes);
    }
    ([(header::CONTENT_TYPE, "application/json"), (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")], body.to_string())
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_segment() {
        assert_eq!(
            metadata_url("https://mcp.example.com/mcp", "/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(metadata_url("https://h:8443", "/mcp"), "https://h:8443/.well-known/oauth-protected-resource/mcp");
    }
}
