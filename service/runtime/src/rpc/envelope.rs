//! The per-request `_meta` envelope (MCP 2026-07-28 basic § Request metadata (_meta); basic § Request metadata (_meta), errors): version, capabilities and opt-ins
//! carried by every request in place of the old `initialize` handshake.

use mcp_protocol::{meta, version};
use serde_json::{Map, Value, json};

use super::{Kind, RpcError};

/// What the envelope of one request says. Read only from this request (MCP 2026-07-28 basic § Client capabilities).
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (an object).
    pub client_capabilities: Value,
    /// `progressToken`, when the client opted in to progress.
    pub progress_token: Option<Value>,
    /// Index into [`meta::LOG_LEVELS`], when the client opted in to log messages.
    pub log_level: Option<usize>,
    /// W3C trace context from `_meta` (SEP-414): `traceparent`.
    pub traceparent: Option<String>,
    /// `tracestate`, read only with a `traceparent`.
    pub tracestate: Option<String>,
    /// W3C `baggage`.
    pub baggage: Option<String>,
    /// `clientInfo` as `name/version` ([`super::client`]), when the request names its client.
    pub client: Option<std::sync::Arc<str>>,
    /// Built by the 2025-era leg from a session, not read from `_meta`: the client sends no
    /// `Mcp-Param-*` headers and learns of missing capabilities as tool errors.
    pub legacy: bool,
}

/// Takes `params._meta` out of `params` and validates it. `header_version` is the
/// `MCP-Protocol-Version` header, used to tell a legacy client at a modern-only server
/// (MCP 2026-07-28 basic/versioning § Version negotiation, our choice where the spec leaves it open) from a malformed modern request.
pub fn take(
    method: &str,
    params: Option<&mut Map<String, Value>>,
    header_version: Option<&str>,
) -> Result<Envelope, RpcError> {
    let Some(params) = params else {
        return Err(no_envelope(method, None, header_version));
    };
    let Some(meta_value) = params.remove("_meta") else {
        // A legacy `initialize` names the version it wants in its own params (MCP 2026-07-28 basic/versioning § Version negotiation).
        let asked = (method == "initialize").then(|| params.get("protocolVersion")?.as_str()).flatten();
        return Err(no_envelope(method, asked, header_version));
    };
    let Value::Object(mut m) = meta_value else {
        return Err(invalid("params._meta must be an object carrying the request envelope", None));
    };
    let missing: Vec<&str> =
        [meta::PROTOCOL_VERSION, meta::CLIENT_CAPABILITIES].into_iter().filter(|k| !m.contains_key(*k)).collect();
    if !missing.is_empty() {
        if !m.contains_key(meta::PROTOCOL_VERSION)
            && let Some(err) = legacy_version_error(header_version)
        {
            return Err(err);
        }
        return Err(invalid(
            format!("Invalid params: missing required _meta field(s): {}", missing.join(", ")),
            Some(json!({ "missing": missing })),
        ));
    }
    let protocol_version = match m.remove(meta::PROTOCOL_VERSION) {
        Some(Value::String(v)) => v,
        _ => {
            return Err(invalid(
                format!("Invalid params: _meta[\"{}\"] must be a string", meta::PROTOCOL_VERSION),
                None,
            ));
        }
    };
    let client_capabilities = match m.remove(meta::CLIENT_CAPABILITIES) {
        Some(v @ Value::Object(_)) => v,
        _ => {
            return Err(invalid(
                format!(
                    "Invalid params: _meta[\"{}\"] must be an object (use {{}} for none)",
                    meta::CLIENT_CAPABILITIES
                ),
                None,
            ));
        }
    };
    let mut client = None;
    if let Some(info) = m.get(meta::CLIENT_INFO) {
        client = super::client::of_value(info);
        if client.is_none() {
            return Err(invalid(
                format!(
                    "Invalid params: _meta[\"{}\"] must be an object with string 'name' and 'version'",
                    meta::CLIENT_INFO
                ),
                None,
            ));
        }
    }
    let progress_token = match m.remove(meta::PROGRESS_TOKEN) {
        None => None,
        Some(t @ Value::String(_)) => Some(t),
        Some(t @ Value::Number(_)) if t.is_i64() || t.is_u64() => Some(t),
        Some(_) => {
            return Err(invalid("Invalid params: _meta.progressToken must be a string or an integer", None));
        }
    };
    let log_level = match m.get(meta::LOG_LEVEL) {
        None => None,
        Some(level) => match level.as_str().and_then(|l| meta::LOG_LEVELS.iter().position(|x| *x == l)) {
            Some(i) => Some(i),
            None => {
                return Err(invalid(
                    format!(
                        "Invalid params: _meta[\"{}\"] must be one of {}",
                        meta::LOG_LEVEL,
                        meta::LOG_LEVELS.join(", ")
                    ),
                    None,
                ));
            }
        },
    };
    // Trace context (SEP-414): strings or nothing; a malformed value is ignored, never an error,
    // since tracing must not change what a request does.
    let mut text = |key: &str| match m.remove(key) {
        Some(Value::String(t)) => Some(t),
        _ => None,
    };
    let traceparent = text(meta::TRACEPARENT);
    let tracestate = traceparent.as_ref().and(text(meta::TRACESTATE));
    let baggage = text(meta::BAGGAGE);
    Ok(Envelope {
        protocol_version,
        client_capabilities,
        progress_token,
        log_level,
        traceparent,
        tracestate,
        baggage,
        client,
        legacy: false,
    })
}

/// No `_meta` at all: a legacy client (answer `-32022` naming our versions) or a malformed
/// modern request (`-32602`).
fn no_envelope(method: &str, asked: Option<&str>, header_version: Option<&str>) -> RpcError {
    if let Some(requested) = asked {
        return unsupported_version(requested);
    }
    if let Some(err) = legacy_version_error(header_version) {
        return err;
    }
    let hint = if method == "initialize" {
        format!(
            "this server speaks MCP {} only: there is no initialize handshake; send every request with params._meta",
            version::SUPPORTED.join(", ")
        )
    } else {
        format!(
            "Invalid params: missing required _meta field(s): {}, {} (this server speaks MCP {})",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES,
            version::SUPPORTED.join(", ")
        )
    };
    invalid(hint, Some(json!({ "missing": [meta::PROTOCOL_VERSION, meta::CLIENT_CAPABILITIES] })))
}

/// A header naming a revision we do not serve: `-32022` with what we do serve (MCP 2026-07-28 basic/versioning § Version negotiation).
fn legacy_version_error(header_version: Option<&str>) -> Option<RpcError> {
    let requested = header_version.filter(|v| !version::is_supported(v))?;
    Some(unsupported_version(requested))
}

/// `-32022` with `data.supported` and `data.requested`. The message says both ways in: the
/// 2026-07-28 revision per request, and the 2025 revisions through `initialize` (a 2025-era
/// request reaches here without the session `initialize` would have given it).
pub fn unsupported_version(requested: &str) -> RpcError {
    let legacy = version::LEGACY_SERVED.join(", ");
    let current = version::SUPPORTED.join(", ");
    let message = if version::LEGACY_SERVED.contains(&requested) {
        format!(
            "Unsupported protocol version '{requested}' on a request without a session: {requested} is served \
             through initialize (send it first, then its Mcp-Session-Id on every request); {current} needs no \
             initialize and carries its version in params._meta"
        )
    } else {
        format!(
            "Unsupported protocol version '{requested}': this server speaks {current} (version in params._meta, \
             no initialize) and {legacy} (through initialize)"
        )
    };
    RpcError::new(Kind::UnsupportedVersion, message)
        .with_data(json!({ "supported": version::SUPPORTED, "requested": requested }))
}

fn invalid(message: impl Into<String>, data: Option<Value>) -> RpcError {
    RpcError { kind: Kind::InvalidEnvelope, message: message.into(), data }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("test params are objects"),
        }
    }

    #[test]
    fn valid_envelope() {
        let mut p = params(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "progressToken": 5, "io.modelcontextprotocol/logLevel": "warning", "other": 1}, "name": "x"}));
        let e = take("tools/call", Some(&mut p), Some("2026-07-28")).unwrap();
        assert_eq!(e.protocol_version, "2026-07-28");
        assert_eq!(e.progress_token, Some(json!(5)));
        assert_eq!(e.log_level, Some(3));
        assert!(!p.contains_key("_meta"));
    }

    #[test]
    fn missing_pieces_are_named() {
        let e = take("tools/list", Some(&mut params(json!({}))), Some("2026-07-28")).unwrap_err();
        assert_eq!(e.kind, Kind::InvalidEnvelope);
        let e = take(
            "tools/list",
            Some(&mut params(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}))),
            None,
        )
        .unwrap_err();
        assert_eq!(e.data.unwrap()["missing"], json!(["io.modelcontextprotocol/clientCapabilities"]));
        let e = take("tools/list", None, Some("2025-11-25")).unwrap_err();
        assert_eq!(e.kind, Kind::UnsupportedVersion);
        let mut init = params(json!({"protocolVersion": "2025-11-25", "capabilities": {}}));
        let e = take("initialize", Some(&mut init), None).unwrap_err();
        assert_eq!(e.data.unwrap()["requested"], "2025-11-25");
    }

    #[test]
    fn an_unsupported_version_names_both_ways_in() {
        let served = unsupported_version("2025-11-25").message;
        assert!(served.contains("served through initialize") && served.contains("2026-07-28"), "{served}");
        let unknown = unsupported_version("2099-01-01").message;
        for v in ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"] {
            assert!(unknown.contains(v), "{unknown}");
        }
    }

    #[test]
    fn wrong_types_are_rejected() {
        for meta in [
            json!({"io.modelcontextprotocol/protocolVersion": 1, "io.modelcontextprotocol/clientCapabilities": {}}),
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}),
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": 1}}),
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "loud"}),
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": 1.5}),
            json!("not an object"),
        ] {
            let e = take("tools/list", Some(&mut params(json!({"_meta": meta}))), None).unwrap_err();
            assert_eq!(e.kind, Kind::InvalidEnvelope, "{}", e.message);
        }
    }
}
