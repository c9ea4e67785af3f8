//! What the server advertises: the capabilities (and so which methods exist) and the
//! pre-rendered `server/discover` result (MCP 2026-07-28 server/discover).

use mcp_protocol::{meta, skills as skills_ext, version};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::config::Config;
use crate::rpc::Method;
use crate::rpc::response::{ResultObject, ResultType, ServerInfo, prerender};

/// Which server capabilities are advertised (and so which methods exist, MCP 2026-07-28 server/discover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// `tools` (always).
    pub tools: bool,
    /// `resources`: at least one resource or template.
    pub resources: bool,
    /// `prompts`: at least one prompt.
    pub prompts: bool,
    /// `completions`: prompts or templates to complete.
    pub completions: bool,
    /// The skills extension (`io.modelcontextprotocol/skills`, with `directoryRead`): an
    /// adapter serves skills.
    pub skills: bool,
}

impl Capabilities {
    /// Whether `method` exists given what is advertised (MCP 2026-07-28 server/discover: a method behind an
    /// unadvertised capability is `-32601`).
    pub fn advertises(self, method: Method) -> bool {
        match method {
            // The tasks extension is always advertised; each request must still declare it.
            Method::Discover | Method::Listen | Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => true,
            Method::ToolsList | Method::ToolsCall => self.tools,
            Method::ResourcesList | Method::ResourceTemplatesList | Method::ResourcesRead => self.resources,
            Method::PromptsList | Method::PromptsGet => self.prompts,
            Method::Complete => self.completions,
            Method::SkillsList | Method::SkillsGet | Method::DirectoryRead => self.skills,
        }
    }
}

pub(super) fn render_discover(
    config: &Config,
    instructions: Option<&str>,
    caps: Capabilities,
    server_info: &ServerInfo,
) -> Box<RawValue> {
    let mut body = serde_json::Map::new();
    body.insert("supportedVersions".into(), json!(version::SUPPORTED));
    body.insert("capabilities".into(), capabilities_object(caps));
    if let Some(i) = instructions {
        body.insert("instructions".into(), json!(i));
    }
    body.insert("ttlMs".into(), json!(config.caching.discover.ttl_ms));
    body.insert("cacheScope".into(), serde_json::to_value(config.caching.discover.cache_scope).expect("scope"));
    prerender(&ResultObject::new(ResultType::Complete, &body, server_info))
}

/// The server capabilities `server/discover` (and the server card) advertise.
pub(super) fn capabilities_object(caps: Capabilities) -> Value {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("tools".into(), json!({"listChanged": true}));
    if caps.resources {
        capabilities.insert("resources".into(), json!({"subscribe": true, "listChanged": true}));
    }
    if caps.prompts {
        capabilities.insert("prompts".into(), json!({"listChanged": true}));
    }
    if caps.completions {
        capabilities.insert("completions".into(), json!({}));
    }
    // Deprecated, but the fixtures log when asked (MCP 2026-07-28 basic/patterns/progress § request-scoped notifications: sending requires advertising).
    capabilities.insert("logging".into(), json!({}));
    let mut extensions = json!({ (meta::TASKS_EXTENSION): {} });
    if caps.skills {
        // Settings inline under the id (SEP-2133); every directory of every skill is served.
        extensions[skills_ext::SKILLS_EXTENSION] = json!({"directoryRead": true});
    }
    capabilities.insert("extensions".into(), extensions);
    Value::Object(capabilities)
}
