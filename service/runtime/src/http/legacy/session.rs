//! Stateless 2025-era sessions: `Mcp-Session-Id` is a token sealed with the requestState key ring (purpose `s1`) carrying everything a replica needs.

use std::time::Duration;

use axum::http::HeaderMap;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mrtr::Sealer;
use crate::mrtr::seal::now_secs;

/// The `Mcp-Session-Id` header (MCP 2025-11-25 basic/transports § Session Management).
pub const HEADER: &str = "mcp-session-id";

/// How long a session id stays valid; after it the client gets 404 and initializes again.
pub const TTL: Duration = Duration::from_secs(24 * 3600);

/// Sealed plaintext bigger than this refuses the `initialize` (capabilities and clientInfo are the client's to bloat).
pub const MAX_PLAINTEXT: usize = 4096;

/// The AEAD purpose of session ids: a requestState (`v1`) never opens as a session, nor the reverse.
const PURPOSE: &str = "s1";

/// What a session id carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// Negotiated revision.
    #[serde(rename = "v")]
    pub version: String,
    /// The client's capabilities from `initialize`.
    #[serde(rename = "c")]
    pub capabilities: Value,
    /// The client's `clientInfo`.
    #[serde(rename = "i")]
    pub client_info: Value,
    /// Digest of the authenticated caller, when `[auth]` is on.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The virtual endpoint it was opened on (`None`: `server.path`): refused on any other.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Unix seconds after which the id is refused.
    pub exp: u64,
}

/// Why a request's session id was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No `Mcp-Session-Id` (400).
    Missing,
    /// Forged, tampered, expired, another caller's, or unreadable (404: initialize again).
    Invalid,
}

/// An opened session and the digest that names it (relay routing, log levels).
#[derive(Debug, Clone)]
pub struct Opened {
    /// The session.
    pub session: Session,
    /// SHA-256 of the session id, base64url.
    pub digest: String,
}

/// Seals `session`; `None` when it is too large to issue.
pub fn mint(sealer: &Sealer, session: &Session) -> Option<String> {
    let plain = serde_json::to_vec(session).expect("serializable session");
    (plain.len() <= MAX_PLAINTEXT).then(|| sealer.seal_bytes(PURPOSE, &plain))
}

/// The session of a request, checked against the caller and the endpoint it came to.
pub fn open(
    sealer: &Sealer,
    headers: &HeaderMap,
    principal: Option<&str>,
    endpoint: Option<&str>,
) -> Result<Opened, Refused> {
    let mut values = headers.get_all(HEADER).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(if headers.contains_key(HEADER) { Refused::Invalid } else { Refused::Missing });
    };
    let token = value.to_str().map_err(|_| Refused::Invalid)?;
    let plain = sealer.open_bytes(PURPOSE, token).map_err(|_| Refused::Invalid)?;
    let session: Session = serde_json::from_slice(&plain).map_err(|_| Refused::Invalid)?;
    if session.exp < now_secs()
        || session.principal.as_deref() != principal.map(digest).as_deref()
        || session.endpoint.as_deref() != endpoint
    {
        return Err(Refused::Invalid);
    }
    Ok(Opened { session, digest: digest(token) })
}

/// SHA-256 of `text`, base64url.
pub fn digest(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()))
}

/// A new session's expiry.
pub fn expiry() -> u64 {
    now_secs() + TTL.as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RequestStateConfig, Secret};
    use crate::mrtr::Binding;
    use serde_json::json;

    fn sealer() -> Sealer {
        Sealer::new(&RequestStateConfig {
            ttl: Duration::from_secs(60),
            max_bytes: 65536,
            keys: vec![("k1".to_owned(), Secret::new(vec![7; 32]))],
        })
    }

    fn headers(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HEADER, token.parse().unwrap());
        h
    }

    #[test]
    fn sessions_open_only_as_sessions_and_only_for_their_caller() {
        let s = sealer();
        let session = |exp| Session {
            version: "2025-11-25".into(),
            capabilities: json!({"elicitation": {}}),
            client_info: json!({"name": "c", "version": "1"}),
            principal: Some(digest("alice")),
            endpoint: None,
            exp,
        };
        let token = mint(&s, &session(expiry())).unwrap();
        assert!(token.starts_with("s1.k1.") && token.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        let opened = open(&s, &headers(&token), Some("alice"), None).unwrap();
        assert_eq!(opened.session.version, "2025-11-25");
        assert_eq!(open(&s, &headers(&token), Some("bob"), None).unwrap_err(), Refused::Invalid);
        assert_eq!(open(&s, &headers(&token), None, None).unwrap_err(), Refused::Invalid);
        let expired = mint(&s, &session(1)).unwrap();
        assert_eq!(open(&s, &headers(&expired), Some("alice"), None).unwrap_err(), Refused::Invalid);
        assert_eq!(open(&s, &HeaderMap::new(), None, None).unwrap_err(), Refused::Missing);
        // A requestState is not a session, and a session is not a requestState.
        let args = json!({});
        let binding = Binding { method: "tools/call", target: "t", arguments: &args, principal: None, endpoint: None };
        let state = s.seal(&binding, &json!({}));
        assert_eq!(open(&s, &headers(&state), None, None).unwrap_err(), Refused::Invalid);
        let relabelled = state.replacen("v1.", "s1.", 1);
        assert_eq!(open(&s, &headers(&relabelled), None, None).unwrap_err(), Refused::Invalid);
        assert!(s.open(&token.replacen("s1.", "v1.", 1), &binding).is_err());
        // A session opened on a virtual endpoint is refused on `server.path` and on any other.
        let support = mint(&s, &Session { endpoint: Some("/mcp/support".into()), ..session(expiry()) }).unwrap();
        assert!(open(&s, &headers(&support), Some("alice"), Some("/mcp/support")).is_ok());
        assert_eq!(open(&s, &headers(&support), Some("alice"), None).unwrap_err(), Refused::Invalid);
        assert_eq!(open(&s, &headers(&support), Some("alice"), Some("/mcp/github")).unwrap_err(), Refused::Invalid);
        assert_eq!(open(&s, &headers(&token), Some("alice"), Some("/mcp/support")).unwrap_err(), Refused::Invalid);
        let huge = Session { client_info: json!({"name": "x".repeat(5000), "version": "1"}), ..session(expiry()) };
        assert!(mint(&s, &huge).is_none());
    }
}
