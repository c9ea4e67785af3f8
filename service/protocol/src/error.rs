//! The JSON-RPC error-code registry of this revision (MCP 2026-07-28 basic § Error codes).

/// JSON-RPC error codes the runtime sends. Never `-32002` or `-32042` (reserved, MCP 2026-07-28 basic § Error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorCode {
    /// Body is not valid JSON.
    ParseError = -32700,
    /// Not a single JSON-RPC request or notification object.
    InvalidRequest = -32600,
    /// Unknown or removed method, or a capability we do not advertise (HTTP 404).
    MethodNotFound = -32601,
    /// Bad envelope (HTTP 400) or bad params: unknown tool, bad arguments, bad cursor, ...
    InvalidParams = -32602,
    /// Unexpected server failure.
    InternalError = -32603,
    /// HTTP headers missing, malformed or different from the body (HTTP 400).
    HeaderMismatch = -32020,
    /// The request needs a client capability it did not declare (HTTP 400).
    MissingRequiredClientCapability = -32021,
    /// The requested protocol revision is not served (HTTP 400).
    UnsupportedProtocolVersion = -32022,
    /// Application-defined (outside the reserved -32768..-32000 range, MCP 2026-07-28 basic § Error codes): a rate
    /// limit refused the call; `data.retryAfterMs` says when to try again (HTTP 429).
    RateLimited = -31029,
}

impl ErrorCode {
    /// The numeric code as sent on the wire.
    pub const fn code(self) -> i32 {
        self as i32
    }
}
