//! JSON-RPC 2.0 framing pieces shared by every message (MCP 2026-07-28 basic § Messages).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ErrorCode;

/// A request id: a string or an integer, never null (MCP 2026-07-28 basic § Messages).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// Integer id.
    Int(i64),
    /// String id.
    Str(String),
}

impl RequestId {
    /// Reads an id from a parsed body: `None` for null, floats, objects and other non-ids.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::Str(s.clone())),
            Value::Number(n) => n.as_i64().map(Self::Int),
            _ => None,
        }
    }

    /// The id as a JSON value (used where the id is echoed inside `_meta`).
    pub fn to_value(&self) -> Value {
        match self {
            Self::Int(i) => Value::from(*i),
            Self::Str(s) => Value::from(s.as_str()),
        }
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(i) => write!(f, "{i}"),
            Self::Str(s) => f.write_str(s),
        }
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// One of [`ErrorCode`].
    pub code: i32,
    /// One short sentence a person can act on.
    pub message: String,
    /// Structured detail (`supported`/`requested`, `requiredCapabilities`, `uri`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code: code.code(), message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}
