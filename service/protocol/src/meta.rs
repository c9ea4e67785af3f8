//! Reserved `_meta` keys (MCP 2026-07-28 basic § Request metadata (_meta); basic § Result and notification _meta) and the log levels of `logLevel`.

/// Request envelope: the protocol revision of this request (required).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Request envelope: what the client supports for this request (required).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Request envelope: self-reported client identity (optional, display only).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Request envelope: opt-in to `notifications/message` (deprecated logging).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Request envelope: opt-in to `notifications/progress`.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// W3C trace context keys, deliberately unprefixed (SEP-414).
pub const TRACEPARENT: &str = "traceparent";
/// W3C trace state.
pub const TRACESTATE: &str = "tracestate";
/// W3C baggage.
pub const BAGGAGE: &str = "baggage";

/// Result `_meta`: the server's self-reported identity (SHOULD be on every result).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Listen streams: the JSON-RPC id of the `subscriptions/listen` request (MCP 2026-07-28 basic § Result and notification _meta).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Extension id of the tasks extension (MCP tasks extension § Negotiation and task creation).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The eight logging levels, lowest first (MCP 2026-07-28 server/utilities/logging).
pub const LOG_LEVELS: &[&str] = &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
