//! A request that passed the transport's checks: the method (one of those this runtime
//! serves), its params, the validated `_meta` envelope and what the client accepts.

use mcp_protocol::RequestId;
use serde_json::{Map, Value};

use super::Envelope;

/// The methods this runtime serves (MCP 2026-07-28 basic/transports/streamable-http.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourceTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `completion/complete`.
    Complete,
    /// `subscriptions/listen`.
    Listen,
    /// `tasks/get` (tasks extension).
    TasksGet,
    /// `tasks/update` (tasks extension).
    TasksUpdate,
    /// `tasks/cancel` (tasks extension).
    TasksCancel,
    /// `skills/list` (skills extension, SEP-2640).
    SkillsList,
    /// `skills/get` (skills extension).
    SkillsGet,
    /// `resources/directory/read` (skills extension, `directoryRead`).
    DirectoryRead,
}

impl Method {
    /// Looks a method up by its wire name; removed and unknown methods are `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "server/discover" => Self::Discover,
            "tools/list" => Self::ToolsList,
            "tools/call" => Self::ToolsCall,
            "resources/list" => Self::ResourcesList,
            "resources/templates/list" => Self::ResourceTemplatesList,
            "resources/read" => Self::ResourcesRead,
            "prompts/list" => Self::PromptsList,
            "prompts/get" => Self::PromptsGet,
            "completion/complete" => Self::Complete,
            "subscriptions/listen" => Self::Listen,
            "tasks/get" => Self::TasksGet,
            "tasks/update" => Self::TasksUpdate,
            "tasks/cancel" => Self::TasksCancel,
            "skills/list" => Self::SkillsList,
            "skills/get" => Self::SkillsGet,
            "resources/directory/read" => Self::DirectoryRead,
            _ => return None,
        })
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Discover => "server/discover",
            Self::ToolsList => "tools/list",
            Self::ToolsCall => "tools/call",
            Self::ResourcesList => "resources/list",
            Self::ResourceTemplatesList => "resources/templates/list",
            Self::ResourcesRead => "resources/read",
            Self::PromptsList => "prompts/list",
            Self::PromptsGet => "prompts/get",
            Self::Complete => "completion/complete",
            Self::Listen => "subscriptions/listen",
            Self::TasksGet => "tasks/get",
            Self::TasksUpdate => "tasks/update",
            Self::TasksCancel => "tasks/cancel",
            Self::SkillsList => "skills/list",
            Self::SkillsGet => "skills/get",
            Self::DirectoryRead => "resources/directory/read",
        }
    }

    /// The param mirrored in `Mcp-Name` (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers).
    pub fn routing_param(self) -> Option<&'static str> {
        match self {
            Self::ToolsCall | Self::PromptsGet => Some("name"),
            Self::ResourcesRead => Some("uri"),
            Self::TasksGet | Self::TasksUpdate | Self::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

/// What the client accepts (MCP 2026-07-28 basic/transports/streamable-http § Sending messages to the server).
#[derive(Debug, Clone, Copy)]
pub struct Accepts {
    /// `text/event-stream` is acceptable: notifications can be streamed.
    pub sse: bool,
}

/// A request that passed steps 1–11.
#[derive(Debug)]
pub struct Request {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// A method this server serves.
    pub method: Method,
    /// `params` without `_meta`.
    pub params: Map<String, Value>,
    /// The validated envelope.
    pub envelope: Envelope,
    /// What the client accepts.
    pub accepts: Accepts,
}
