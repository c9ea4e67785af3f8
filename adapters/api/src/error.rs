//! What can go wrong in an adapter, and who caused it. The runtime maps every variant to the
//! wire in one place (`mcp_runtime::error`).

use std::time::Duration;

use serde_json::Value;

/// An adapter failure. Variants name the culprit: the caller (bad input), the backend, or us.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// Caller: no such tool in this adapter.
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// Caller: no such prompt.
    #[error("Unknown prompt: {0}")]
    UnknownPrompt(String),
    /// Caller: no such resource (`-32602` with `data.uri`, MCP 2026-07-28 server/resources).
    #[error("Resource not found: {0}")]
    ResourceNotFound(String),
    /// Caller: arguments the schema or the adapter refuses.
    #[error("Invalid arguments{}: {message}", field.as_ref().map(|f| format!(" for '{f}'")).unwrap_or_default())]
    InvalidArguments {
        /// The offending argument, when one can be named.
        field: Option<String>,
        /// What is wrong, for a person.
        message: String,
    },
    /// Caller: the request lacks a client capability this call needs (MCP 2026-07-28 basic § Client capabilities).
    #[error("{message}")]
    MissingCapability {
        /// A `ClientCapabilities` object naming what is needed.
        required: Value,
        /// What needs it.
        message: String,
    },
    /// Caller: the upstream refused the caller's own token ([`crate::CallContext::user_token`]:
    /// revoked, or expired early), so the request was not carried out. The runtime forgets the
    /// token and asks the caller to connect the upstream again.
    #[error("the upstream refused the caller's own token")]
    UserTokenRefused,
    /// Backend: it did not answer in time.
    #[error("timed out after {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The call was cancelled (client gone or shutdown).
    #[error("cancelled")]
    Cancelled,
    /// Backend: it failed (unreachable, bad answer, non-zero exit that is not a tool error).
    #[error("{0}")]
    Backend(String),
    /// Us: a bug or misconfiguration. The message is logged, not sent to the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl AdapterError {
    /// An [`AdapterError::InvalidArguments`] naming `field`.
    pub fn invalid_argument(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidArguments { field: Some(field.into()), message: message.into() }
    }
}
