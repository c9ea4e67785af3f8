//! The server card (SEP-2127, MCP Server Cards, draft: `https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127`):
//! what a client or registry may know before connecting (name, version, where to connect
//! and with which protocol versions, whether a token is needed, the capabilities), made
//! once per configuration load from the configuration and the registry's capabilities.
//! It names no tool, resource or prompt: those depend on the caller and change.

use bytes::Bytes;
use mcp_protocol::version;
use serde_json::{Map, Value, json};

use crate::config::{Config, ServerCardConfig};

/// The card's JSON Schema URI.
pub const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// The card's JSON.
pub fn render(card: &ServerCardConfig, config: &Config, capabilities: Value) -> Bytes {
    let info = &config.server.info;
    let mut body = Map::new();
    body.insert("$schema".into(), json!(SCHEMA));
    body.insert("name".into(), json!(card.name));
    body.insert("version".into(), json!(info.version));
    if let Some(t) = &info.title {
        body.insert("title".into(), json!(t));
    }
    if let Some(d) = &card.description {
        body.insert("description".into(), json!(d));
    }
    if let Some(w) = &card.website_url {
        body.insert("websiteUrl".into(), json!(w));
    }
    if let Some(url) = &card.url {
        let mut versions: Vec<&str> = version::SUPPORTED.to_vec();
        versions.extend(version::LEGACY_SERVED);
        let mut remote = json!({"type": "streamable-http", "url": url, "supportedProtocolVersions": versions});
        if let Some(auth) = &config.auth {
            // OAuth 2.1 when the runtime names its authorization servers (RFC 9728 metadata).
            let oauth = auth.resource.is_some() && !auth.issuers.is_empty();
            let schemes = if oauth { json!(["bearer", "oauth2"]) } else { json!(["bearer"]) };
            remote["authentication"] = json!({"required": true, "schemes": schemes});
        }
        body.insert("remotes".into(), json!([remote]));
    }
    body.insert("capabilities".into(), capabilities);
    Bytes::from(serde_json::to_vec(&Value::Object(body)).expect("JSON values serialize"))
}
