//! The client side of the wire: the revision spoken to an upstream, requests with their
//! envelope, and the messages an upstream sends back while a request runs.

use mcp_adapter_api::protocol::{ErrorObject, meta, version};
use serde_json::{Map, Value, json};

/// The revision an upstream speaks, found at connection time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dialect {
    /// MCP 2026-07-28: every request carries its envelope in `params._meta`
    /// (MCP 2026-07-28 basic § Request metadata (_meta)).
    Modern,
    /// A 2025-era revision negotiated with `initialize` (the revision the server answered).
    Legacy(String),
}

impl Dialect {
    /// The `MCP-Protocol-Version` header value.
    pub fn version(&self) -> &str {
        match self {
            Self::Modern => version::LATEST,
            Self::Legacy(v) => v,
        }
    }
}

/// The revision asked for in `initialize` (the newest 2025-era one).
pub const LEGACY_VERSION: &str = "2025-11-25";

/// What we tell a 2025-era upstream we support, once per session: everything we can relay to
/// our own callers (MCP 2025-11-25 basic/lifecycle § Initialization), so an upstream that
/// offers tools by the client's capabilities offers them all. A caller that lacks one of
/// these when the upstream asks gets `-32021` instead.
///
/// `roots` without `listChanged`: a `roots/list` sent on a call's own HTTP stream is answered
/// by that call's caller (our input round); any other (outside a call, or on stdio, where a
/// request cannot name its call) gets [`no_roots`]. There is no connection-wide list that
/// could change, so we never send `notifications/roots/list_changed` (MCP 2025-11-25
/// client/roots § Capabilities).
pub fn legacy_capabilities() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

/// Our answer to a `roots/list` that belongs to no one caller: no roots (an empty list is a
/// valid `ListRootsResult`, MCP 2025-11-25 client/roots § Listing Roots).
pub fn no_roots() -> Value {
    json!({"roots": []})
}

/// `clientInfo` we present upstream.
pub fn client_info() -> Value {
    json!({"name": "mcp-runtime", "version": env!("CARGO_PKG_VERSION")})
}

/// One message from the upstream while a request of ours runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A notification (`notifications/progress`, `notifications/message`, list changes).
    Notification {
        /// Its method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// A request to us (2025-era: `elicitation/create`, `sampling/createMessage`,
    /// `roots/list`, `ping`).
    Request {
        /// Its id, echoed in our answer.
        id: Value,
        /// Its method.
        method: String,
        /// Its params (`Null` when absent).
        params: Value,
    },
    /// The answer to a request (ours, matched by `id`).
    Response {
        /// Its id.
        id: Value,
        /// The result or the error.
        outcome: Result<Value, ErrorObject>,
    },
}

impl Incoming {
    /// Reads one JSON-RPC message; `None` for anything that is not one.
    pub fn parse(message: Value) -> Option<Self> {
        let Value::Object(mut m) = message else { return None };
        let params = m.remove("params").unwrap_or(Value::Null);
        let id = m.remove("id");
        match (m.remove("method"), id) {
            (Some(Value::String(method)), None) => Some(Self::Notification { method, params }),
            (Some(Value::String(method)), Some(id)) => Some(Self::Request { id, method, params }),
            (None, Some(id)) => {
                let outcome = match (m.remove("result"), m.remove("error")) {
                    (Some(result), None) => Ok(result),
                    (None, Some(error)) => Err(serde_json::from_value(error).unwrap_or_else(|_| ErrorObject {
                        code: -32603,
                        message: "the upstream sent a malformed error".into(),
                        data: None,
                    })),
                    _ => return None,
                };
                Some(Self::Response { id, outcome })
            }
            _ => None,
        }
    }
}

/// `params` for `method` in `dialect`: the modern envelope (protocol version, the caller's
/// capabilities, our identity) or nothing extra, plus the progress token (and, modern, the
/// log level) when our caller takes notices. A 2025-era upstream gets no `inputResponses` or
/// `requestState`: its revision has no input rounds (MCP 2026-07-28 basic/patterns/mrtr
/// replaced its server-to-client requests).
pub fn params(
    dialect: &Dialect,
    mut params: Map<String, Value>,
    capabilities: &Value,
    progress_token: Option<&Value>,
) -> Map<String, Value> {
    if *dialect != Dialect::Modern {
        params.remove("inputResponses");
        params.remove("requestState");
    }
    let mut envelope = match params.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if *dialect == Dialect::Modern {
        envelope.insert(meta::PROTOCOL_VERSION.into(), json!(version::LATEST));
        envelope.insert(meta::CLIENT_CAPABILITIES.into(), capabilities.clone());
        envelope.insert(meta::CLIENT_INFO.into(), client_info());
    }
    if let Some(token) = progress_token {
        envelope.insert(meta::PROGRESS_TOKEN.into(), token.clone());
        // Our caller takes notices: ask a modern upstream for its log messages too (the
        // runtime passes on only those at or above the caller's own level).
        if *dialect == Dialect::Modern {
            envelope.insert(meta::LOG_LEVEL.into(), json!("debug"));
        }
    }
    if !envelope.is_empty() {
        params.insert("_meta".into(), Value::Object(envelope));
    }
    params
}

/// A JSON-RPC request body.
pub fn request(id: u64, method: &str, params: Map<String, Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A JSON-RPC notification body.
pub fn notification(method: &str, params: Value) -> Value {
    if params.is_null() {
        json!({"jsonrpc": "2.0", "method": method})
    } else {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }
}

/// Our answer to a request of the upstream.
pub fn response(id: &Value, outcome: Result<Value, ErrorObject>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_kind_of_message() {
        let n = Incoming::parse(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}));
        assert!(matches!(n, Some(Incoming::Notification { ref method, .. }) if method == "notifications/progress"));
        let r = Incoming::parse(json!({"jsonrpc":"2.0","id":"s1","method":"roots/list"}));
        assert!(matches!(r, Some(Incoming::Request { ref params, .. }) if params.is_null()));
        let ok = Incoming::parse(json!({"jsonrpc":"2.0","id":3,"result":{"x":1}})).unwrap();
        assert_eq!(ok, Incoming::Response { id: json!(3), outcome: Ok(json!({"x":1})) });
        let err = Incoming::parse(json!({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}})).unwrap();
        assert!(matches!(err, Incoming::Response { outcome: Err(ref e), .. } if e.code == -32602));
        assert_eq!(Incoming::parse(json!([1])), None);
        assert_eq!(Incoming::parse(json!({"id":1})), None);
    }

    #[test]
    fn the_modern_envelope_rides_in_meta() {
        let p = params(&Dialect::Modern, Map::new(), &json!({"elicitation":{}}), Some(&json!(7)));
        assert_eq!(p["_meta"][meta::PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(p["_meta"][meta::CLIENT_CAPABILITIES], json!({"elicitation":{}}));
        assert_eq!(p["_meta"]["progressToken"], json!(7));
        let legacy = params(&Dialect::Legacy("2025-11-25".into()), Map::new(), &json!({}), None);
        assert!(legacy.is_empty());
    }

    #[test]
    fn only_a_modern_upstream_gets_the_callers_input() {
        let mut input = Map::new();
        input.insert("inputResponses".into(), json!({"k": {"action": "decline"}}));
        input.insert("requestState".into(), json!("up-1"));
        let modern = params(&Dialect::Modern, input.clone(), &json!({}), None);
        assert_eq!((&modern["inputResponses"], &modern["requestState"]), (&input["inputResponses"], &json!("up-1")));
        let legacy = params(&Dialect::Legacy("2025-11-25".into()), input, &json!({}), None);
        assert!(legacy.is_empty(), "{legacy:?}");
    }

    #[test]
    fn a_2025_era_upstream_hears_every_capability_we_relay() {
        let caps = legacy_capabilities();
        for c in ["elicitation", "sampling", "roots"] {
            assert!(caps.get(c).is_some(), "{c} is not declared: {caps}");
        }
        assert_eq!(caps["roots"], json!({}), "no roots/list_changed is ever sent upstream");
        assert_eq!(no_roots(), json!({"roots": []}));
    }
}
