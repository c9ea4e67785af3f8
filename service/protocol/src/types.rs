//! Server features: tools, resources, prompts, completion (MCP 2026-07-28 server/tools), discovery (MCP 2026-07-28 server/discover)
//! and caching hints (MCP 2026-07-28 server/utilities/caching).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ContentBlock, ResourceContents};

/// `Implementation`: name and version of a client or server (display only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// One-line description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

/// `cacheScope` (MCP 2026-07-28 server/utilities/caching).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may share it.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// `ttlMs` + `cacheScope`, required on discover, the four lists and `resources/read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHint {
    /// Freshness in milliseconds; 0 means stale at once.
    pub ttl_ms: u64,
    /// Who may share the cached result.
    pub cache_scope: CacheScope,
}

impl CacheHint {
    /// The default when nothing is configured: `{ttlMs: 0, cacheScope: "private"}` (MCP 2026-07-28 server/utilities/caching, our choice where the spec leaves it open).
    pub const UNCACHEABLE: Self = Self { ttl_ms: 0, cache_scope: CacheScope::Private };
}

/// `ToolAnnotations`: hints only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not modify its environment (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May perform destructive updates (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Interacts with an open world of external entities (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// The spec's reading of the hints: destructive unless read-only or explicitly not destructive.
    pub fn is_destructive(&self) -> bool {
        !self.read_only_hint.unwrap_or(false) && self.destructive_hint.unwrap_or(true)
    }

    /// Read-only tools, and tools hinted idempotent, may be retried.
    pub fn is_idempotent(&self) -> bool {
        self.read_only_hint.unwrap_or(false) || self.idempotent_hint.unwrap_or(false)
    }
}

/// A tool definition as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name, `[A-Za-z0-9_.-]{1,128}`.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; the root has `"type":"object"`. Shared: the config,
    /// the adapter's catalog and the registry hold one copy, and tools with equal schemas
    /// share it ([`crate::schema::intern`]; schemas dominate a tool's memory).
    #[serde(deserialize_with = "crate::schema::deserialize")]
    pub input_schema: Arc<Value>,
    /// JSON Schema of `structuredContent`.
    #[serde(skip_serializing_if = "Option::is_none", default, deserialize_with = "crate::schema::deserialize_option")]
    pub output_schema: Option<Arc<Value>>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Tool {
    /// Whether `name` is a valid tool name, `[A-Za-z0-9_.-]{1,128}` (MCP 2026-07-28
    /// server/tools § Tool names).
    pub fn valid_name(name: &str) -> bool {
        (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    }
}

/// The input schema of a tool without parameters (MCP 2026-07-28 server/tools).
pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "additionalProperties": false})
}

/// `CallToolResult` (without `resultType`, which the runtime adds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content; may be empty.
    pub content: Vec<ContentBlock>,
    /// Structured result matching the tool's `outputSchema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// A tool execution error the model can see and correct.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_error: bool,
    /// Extra metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ContentBlock::text(text)], ..Self::default() }
    }

    /// A tool execution error with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        Self { content: vec![ContentBlock::text(text)], is_error: true, ..Self::default() }
    }

    /// A structured result plus its serialized JSON as text, for older clients (MCP 2026-07-28 server/tools).
    pub fn structured(value: Value) -> Self {
        Self {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..Self::default()
        }
    }
}

/// A resource as listed by `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Raw size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A resource template as listed by `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of what it expands to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// `ReadResourceResult` (without `resultType` and cache hints, which the runtime adds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// One or more contents.
    pub contents: Vec<ResourceContents>,
}

/// A prompt argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Argument name.
    pub name: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Must be given.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub required: bool,
}

/// A prompt as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub arguments: Vec<PromptArgument>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `"user"` or `"assistant"`.
    pub role: Role,
    /// One content block.
    pub content: ContentBlock,
}

/// A message author.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// `GetPromptResult` (without `resultType`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// The `completion` member of a `completion/complete` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values, most relevant first.
    pub values: Vec<String>,
    /// Total number of matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More than `values` exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// What `completion/complete` refers to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// A prompt argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// Prompt name.
        name: String,
    },
    /// A resource-template variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template URI.
        uri: String,
    },
}
