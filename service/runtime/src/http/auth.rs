//! Bearer-token authentication (MCP 2026-07-28 basic/authorization): every request to the MCP endpoint proves who it
//! is before any JSON-RPC processing; the subject binds MRTR state and tasks and keys rate
//! limits. Tokens are compared by SHA-256 digest, so the configured secrets never sit in a
//! lookup table and comparing reveals nothing useful through timing.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_adapter_api::Identity;
use serde_json::json;

use crate::config::AuthConfig;
use crate::rpc::{Kind, RpcError, response};

/// Why a request was not authenticated.
#[derive(Debug, Clone, Copy)]
pub struct Rejected {
    had_token: bool,
}

/// The caller (`None` when authentication is off), or why not.
pub fn authenticate(auth: Option<&AuthConfig>, headers: &HeaderMap) -> Result<Option<Identity>, Rejected> {
    let Some(auth) = auth else { return Ok(None) };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim);
    let subject = token.and_then(|t| {
        let digest: [u8; 32] =
            ring::digest::digest(&ring::digest::SHA256, t.as_bytes()).as_ref().try_into().expect("32-byte digest");
        auth.tokens.get(&digest).cloned()
    });
    match subject {
        Some(subject) => Ok(Some(Identity { subject })),
        None => Err(Rejected { had_token: token.is_some() }),
    }
}

/// The 401 answer with its challenge (RFC 6750, MCP 2026-07-28 basic/authorization).
pub fn unauthorized(auth: Option<&AuthConfig>, rejected: Rejected, endpoint: &str) -> Response {
    let had_token = rejected.had_token;
    let message = if had_token {
        "Unauthorized: the bearer token is not valid for this server"
    } else {
        "Unauthorized: send Authorization: Bearer <token>"
    };
    let err = RpcError::new(Kind::Unauthorized, message);
    let mut challenge = String::from("Bearer realm=\"mcp\"");
    if had_token {
        challenge.push_str(", error=\"invalid_token\"");
    }
    if let Some(resource) = auth.and_then(|a| a.resource.as_ref()) {
        challenge.push_str(&format!(", resource_metadata=\"{}\"", metadata_url(resource, endpoint)));
    }
    let mut res = (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "application/json")], response::error(None, &err))
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
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

/// The Protected Resource Metadata document (RFC 9728), served unauthenticated.
pub fn metadata(auth: Option<&AuthConfig>) -> Response {
    let Some(auth) = auth else { return StatusCode::NOT_FOUND.into_response() };
    let body = json!({
        "resource": auth.resource,
        "authorization_servers": auth.authorization_servers,
        "bearer_methods_supported": ["header"],
        "resource_name": "mcp-runtime",
    });
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
