//! The `io.modelcontextprotocol/tasks` extension (MCP tasks extension § Negotiation and task creation; MCP tasks extension § Methods).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ErrorObject;

/// Task status; terminal states never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for `tasks/update`.
    InputRequired,
    /// Finished with a result (possibly `isError: true`).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Completed, failed or cancelled.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A task and, depending on its status, its outstanding input requests, result or error
/// (`DetailedTask`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Unguessable id.
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Human-readable status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_updated_at: String,
    /// Lifetime from creation in ms; `null` = unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Outstanding input requests (`input_required`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// The original request's result (`completed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}
