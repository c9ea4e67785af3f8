//! The runtime's error type and the one place every error becomes a wire answer
//! (HTTP status + JSON-RPC code, or a tool result with `isError`).

use axum::http::StatusCode;
use mcp_adapter_api::AdapterError;
use mcp_protocol::{CallToolResult, ErrorCode, ErrorObject};
use serde_json::{Value, json};

/// What went wrong, which decides the HTTP status and JSON-RPC code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// No or an invalid bearer token (MCP 2026-07-28 basic/authorization).
    Unauthorized,
    /// `Origin` or `Host` not allowed (MCP 2026-07-28 basic/transports/streamable-http § Security warning (Origin)).
    Forbidden,
    /// Not a POST (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility).
    MethodNotAllowed,
    /// `Content-Type` is not JSON.
    UnsupportedMediaType,
    /// `Accept` rules out every answer we could give (MCP 2026-07-28 basic/transports/streamable-http § Sending messages to the server, our choice where the spec leaves it open).
    NotAcceptable,
    /// Body over `server.max_body_bytes`.
    PayloadTooLarge,
    /// Body is not JSON.
    Parse,
    /// Not one JSON-RPC request or notification object.
    InvalidRequest,
    /// `_meta` envelope missing or malformed (MCP 2026-07-28 basic § Request metadata (_meta), errors).
    InvalidEnvelope,
    /// Routing headers missing, malformed or disagreeing with the body (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).
    HeaderMismatch,
    /// Protocol revision not served (MCP 2026-07-28 basic/versioning § Version negotiation).
    UnsupportedVersion,
    /// Unknown, removed or not-advertised method (MCP 2026-07-28 basic § Error codes).
    MethodNotFound,
    /// Bad params: unknown tool/prompt/resource, bad arguments, bad cursor or requestState.
    InvalidParams,
    /// The request lacks a client capability the call needs (MCP 2026-07-28 basic § Client capabilities).
    MissingCapability,
    /// A rate limit refused the call (HTTP 429 + `Retry-After`).
    RateLimited,
    /// Our fault.
    Internal,
    /// The endpoint is at `limits.max_concurrent_requests` (load shedding).
    Overloaded,
    /// No response head within `limits.request_timeout_ms`.
    TimedOut,
    /// The request body did not arrive within `limits.body_read_timeout_ms` (RFC 9110 §15.5.9).
    RequestTimeout,
}

impl Kind {
    /// HTTP status and JSON-RPC code. Handler-level errors (`InvalidParams`, `Internal`) go
    /// back in band with 200 so dual-era clients do not take them for a legacy server
    /// (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility, our choice where the spec leaves it open).
    pub fn wire(self) -> (StatusCode, ErrorCode) {
        match self {
            Self::Unauthorized => (StatusCode::UNAUTHORIZED, ErrorCode::InvalidRequest),
            Self::Forbidden => (StatusCode::FORBIDDEN, ErrorCode::InvalidRequest),
            Self::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, ErrorCode::InvalidRequest),
            Self::UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, ErrorCode::InvalidRequest),
            Self::NotAcceptable => (StatusCode::NOT_ACCEPTABLE, ErrorCode::InvalidRequest),
            Self::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::InvalidRequest),
            Self::Parse => (StatusCode::BAD_REQUEST, ErrorCode::ParseError),
            Self::InvalidRequest => (StatusCode::BAD_REQUEST, ErrorCode::InvalidRequest),
            Self::InvalidEnvelope => (StatusCode::BAD_REQUEST, ErrorCode::InvalidParams),
            Self::HeaderMismatch => (StatusCode::BAD_REQUEST, ErrorCode::HeaderMismatch),
            Self::UnsupportedVersion => (StatusCode::BAD_REQUEST, ErrorCode::UnsupportedProtocolVersion),
            Self::MethodNotFound => (StatusCode::NOT_FOUND, ErrorCode::MethodNotFound),
            Self::InvalidParams => (StatusCode::OK, ErrorCode::InvalidParams),
            Self::MissingCapability => (StatusCode::BAD_REQUEST, ErrorCode::MissingRequiredClientCapability),
            Self::RateLimited => (StatusCode::TOO_MANY_REQUESTS, ErrorCode::RateLimited),
            Self::Internal => (StatusCode::OK, ErrorCode::InternalError),
            Self::Overloaded => (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::InternalError),
            Self::TimedOut => (StatusCode::GATEWAY_TIMEOUT, ErrorCode::InternalError),
            Self::RequestTimeout => (StatusCode::REQUEST_TIMEOUT, ErrorCode::InvalidRequest),
        }
    }

    /// Stable name for logs, metrics and the `error.type` span attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::NotAcceptable => "not_acceptable",
            Self::PayloadTooLarge => "payload_too_large",
            Self::Parse => "parse_error",
            Self::InvalidRequest => "invalid_request",
            Self::InvalidEnvelope => "invalid_envelope",
            Self::HeaderMismatch => "header_mismatch",
            Self::UnsupportedVersion => "unsupported_protocol_version",
            Self::MethodNotFound => "method_not_found",
            Self::InvalidParams => "invalid_params",
            Self::MissingCapability => "missing_client_capability",
            Self::RateLimited => "rate_limited",
            Self::Internal => "internal_error",
            Self::Overloaded => "overloaded",
            Self::TimedOut => "timeout",
            Self::RequestTimeout => "request_timeout",
        }
    }
}

/// An error on its way to the client.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// Decides status and code.
    pub kind: Kind,
    /// One sentence a person can act on.
    pub message: String,
    /// Structured detail.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), data: None }
    }

    /// Attaches data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602` (in band).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidParams, message)
    }

    /// `-32020` + 400.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(Kind::HeaderMismatch, message)
    }

    /// `-32021` + 400 with `data.requiredCapabilities`.
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        let mut data = serde_json::Map::new();
        data.insert("requiredCapabilities".to_owned(), required);
        Self::new(Kind::MissingCapability, message).with_data(Value::Object(data))
    }

    /// `-32603` with a generic message; the detail goes to the log only.
    pub fn internal(detail: &str) -> Self {
        tracing::error!(error = detail, "internal error");
        Self::new(Kind::Internal, "Internal error; the server log has the details")
    }

    /// The JSON-RPC error object.
    pub fn to_object(&self) -> ErrorObject {
        let (_, code) = self.kind.wire();
        ErrorObject { code: code.code(), message: self.message.clone(), data: self.data.clone() }
    }
}

/// How an adapter failure reaches the client.
#[derive(Debug)]
pub enum Failure {
    /// A JSON-RPC error.
    Rpc(RpcError),
    /// A `tools/call` result with `isError: true` the model can read (MCP 2026-07-28 server/tools).
    ToolError(CallToolResult),
}

/// Maps an adapter error for `method` (`tools/call` turns backend trouble into tool errors;
/// the other methods into `-32603`). The one exhaustive match for adapter errors.
pub fn from_adapter(err: AdapterError, is_tool_call: bool, adapter: Option<&str>) -> Failure {
    let backend = |text: String| {
        if is_tool_call {
            Failure::ToolError(CallToolResult::error(text))
        } else {
            Failure::Rpc(RpcError::new(Kind::Internal, text))
        }
    };
    match err {
        AdapterError::UnknownTool(_) | AdapterError::UnknownPrompt(_) => {
            Failure::Rpc(RpcError::invalid_params(err.to_string()))
        }
        AdapterError::ResourceNotFound(ref uri) => {
            let data = json!({ "uri": uri });
            Failure::Rpc(RpcError::invalid_params("Resource not found").with_data(data))
        }
        AdapterError::InvalidArguments { ref field, .. } => {
            let data = field.as_ref().map(|f| json!({ "field": f }));
            let mut e = RpcError::invalid_params(err.to_string());
            e.data = data;
            Failure::Rpc(e)
        }
        AdapterError::MissingCapability { required, message } => {
            Failure::Rpc(RpcError::missing_capability(message, required))
        }
        // Which adapter failed is said, so the operator reading a caller's report knows where
        // to look (the adapter's own text names its upstream, never a credential).
        AdapterError::Timeout(_) | AdapterError::Backend(_) | AdapterError::UserTokenRefused => match adapter {
            Some(name) => backend(format!("Tool failed in adapter '{name}': {err}")),
            None => backend(format!("Tool failed: {err}")),
        },
        AdapterError::Cancelled => Failure::Rpc(RpcError::new(Kind::Internal, "The call was cancelled")),
        AdapterError::Internal(detail) => Failure::Rpc(RpcError::internal(&detail)),
    }
}
