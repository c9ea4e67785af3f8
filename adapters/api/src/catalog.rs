//! What an adapter offers, and the runtime policies attached to each tool.

use mcp_protocol::skills::Skill;
use mcp_protocol::{Prompt, Resource, ResourceTemplate, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Everything an adapter lists. Order inside each list does not matter: the registry sorts.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Tools with their policies.
    pub tools: Vec<ToolSpec>,
    /// Concrete resources.
    pub resources: Vec<Resource>,
    /// Resource templates (read through [`crate::Adapter::read_resource`] with the matched variables).
    pub resource_templates: Vec<ResourceTemplate>,
    /// Prompts.
    pub prompts: Vec<Prompt>,
    /// Skills (`io.modelcontextprotocol/skills`, SEP-2640), when the adapter serves the
    /// extension: `Some` even while it has none, so the declaration does not come and go.
    pub skills: Option<Skills>,
}

/// What a skills-serving adapter offers: the entries `skills/list` and `skills/get` answer
/// with, and every directory of them for `resources/directory/read`. The files themselves
/// are read through [`crate::Adapter::read_resource`] by the URIs the entries list.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    /// The entries, in listing order.
    pub entries: Vec<Skill>,
    /// Every directory of every skill (the roots included), each once.
    pub directories: Vec<Directory>,
}

impl Skills {
    /// `entries` with the directories their manifests imply (SEP-2640 § Directory Reads and
    /// the Held Entry: a manifest is a complete listing of a skill's files): every skill's
    /// root and each directory on the way to one of its files, with the files and
    /// subdirectories below it. For adapters that relay another server's skills; a files
    /// directory's children carry what the manifest knows (name, size; `text/markdown` for
    /// a `SKILL.md`).
    pub fn from_manifests(entries: Vec<Skill>) -> Self {
        use std::collections::BTreeMap;
        let mut dirs: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        let child = |uri: String, name: &str, mime: Option<&str>, size: Option<u64>| Resource {
            uri,
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: mime.map(str::to_owned),
            size,
        };
        for skill in &entries {
            let root = skill.root();
            dirs.entry(root.to_owned()).or_default();
            for r in &skill.resources {
                let Some(rel) = r.uri.strip_prefix(root).and_then(|s| s.strip_prefix('/')) else { continue };
                let mut dir = root.to_owned();
                let mut parts = rel.split('/').filter(|p| !p.is_empty()).peekable();
                while let Some(part) = parts.next() {
                    let uri = format!("{dir}/{part}");
                    let children = dirs.entry(dir).or_default();
                    if parts.peek().is_none() {
                        let mime = (part == mcp_protocol::skills::MANIFEST).then_some("text/markdown");
                        children.insert(part.to_owned(), child(uri, part, mime, Some(r.size)));
                        break;
                    }
                    children.entry(part.to_owned()).or_insert_with(|| {
                        child(uri.clone(), part, Some(mcp_protocol::skills::DIRECTORY_MIME_TYPE), None)
                    });
                    dir = uri;
                }
            }
        }
        let directories =
            dirs.into_iter().map(|(uri, c)| Directory { uri, children: c.into_values().collect() }).collect();
        Self { entries, directories }
    }
}

/// A directory resource and its direct children (SEP-2640 § Reading Directories): files
/// with their resource metadata, subdirectories with `mimeType: inode/directory`.
#[derive(Debug, Clone, PartialEq)]
pub struct Directory {
    /// Its URI, without a trailing slash.
    pub uri: String,
    /// Its direct children.
    pub children: Vec<Resource>,
}

/// A tool plus what the runtime should do around it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    /// Runtime behaviour common to every adapter kind.
    pub policy: ToolPolicy,
    /// Who checks a call's arguments against `tool.input_schema`.
    pub arguments: ArgumentCheck,
}

impl ToolSpec {
    /// A tool with the default policy, its arguments checked by the runtime.
    pub fn new(tool: Tool) -> Self {
        Self { tool, policy: ToolPolicy::default(), arguments: ArgumentCheck::default() }
    }
}

/// Who checks a call's arguments against the tool's input schema. Set by the adapter, not by
/// the operator: it says whose schema it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ArgumentCheck {
    /// The runtime, before the adapter runs: arguments that fail the schema are answered
    /// `-32602` naming the field, and never reach the backend.
    #[default]
    Runtime,
    /// The backend: the adapter gets the arguments as the client sent them (an object) and
    /// relays the backend's own answer. For pass-through tools whose schema is another
    /// server's, which answers bad arguments with a tool result (`isError: true`) the model
    /// can read and retry (MCP 2025-11-25 server/tools § Error Handling, SEP-1303). The
    /// runtime still asks for missing arguments when the tool's policy says so.
    Backend,
}

/// Per-tool options the runtime applies for every adapter kind. Adapter configs embed this
/// with `#[serde(flatten)]`, so the keys sit beside the tool's own keys in the config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ToolPolicy {
    /// Client capabilities this tool always needs (a `ClientCapabilities` object, e.g.
    /// `{sampling = {}}`); a request that lacks them gets `-32021` before the tool runs.
    pub requires_capabilities: Option<Value>,
    /// Ask the user to confirm (form elicitation) before running the tool.
    pub confirm: bool,
    /// Ask the user for missing required arguments through a form built from the input schema.
    pub elicit_missing_arguments: bool,
    /// Upper bound for one call in milliseconds (the server-wide default applies otherwise).
    pub timeout_ms: Option<u64>,
    /// Whether calls may run as tasks (`io.modelcontextprotocol/tasks`, MCP tasks extension § Negotiation and task creation).
    pub task: TaskSupport,
    /// Cache successful results this long (per caller and arguments); for read-only tools.
    pub cache_ttl_ms: Option<u64>,
}

impl ToolPolicy {
    /// The keys, for messages about unknown ones.
    pub const KEYS: &'static [&'static str] =
        &["requires_capabilities", "confirm", "elicit_missing_arguments", "timeout_ms", "task", "cache_ttl_ms"];
}

/// Overrides of a tool's policy (`[tool_policies.<tool name>]` in the runtime's config): the
/// same keys as [`ToolPolicy`], each optional; unset keys keep what the adapter configured.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyOverride {
    /// Client capabilities the tool always needs.
    pub requires_capabilities: Option<Value>,
    /// Ask the user to confirm before the tool runs.
    pub confirm: Option<bool>,
    /// Ask for missing required arguments through a form.
    pub elicit_missing_arguments: Option<bool>,
    /// Deadline of one call.
    pub timeout_ms: Option<u64>,
    /// `never`, `optional` or `required`.
    pub task: Option<TaskSupport>,
    /// Cache successful results this long.
    pub cache_ttl_ms: Option<u64>,
}

impl PolicyOverride {
    /// Sets every key this override has on `policy`.
    pub fn apply_to(&self, policy: &mut ToolPolicy) {
        if let Some(v) = &self.requires_capabilities {
            policy.requires_capabilities = Some(v.clone());
        }
        if let Some(v) = self.confirm {
            policy.confirm = v;
        }
        if let Some(v) = self.elicit_missing_arguments {
            policy.elicit_missing_arguments = v;
        }
        if let Some(v) = self.timeout_ms {
            policy.timeout_ms = Some(v);
        }
        if let Some(v) = self.task {
            policy.task = v;
        }
        if let Some(v) = self.cache_ttl_ms {
            policy.cache_ttl_ms = Some(v);
        }
    }
}

/// How a tool relates to the tasks extension.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Always answered synchronously.
    #[default]
    Never,
    /// Run as a task when the request declares the extension; synchronously otherwise.
    Optional,
    /// Only as a task: a request without the extension gets `-32021`.
    Required,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn directories_follow_from_the_manifests() {
        let skill: Skill = serde_json::from_value(json!({
            "uri": "skill://a/pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "d"},
            "resources": [
                {"uri": "skill://a/pdf/SKILL.md", "digest": "sha256:0", "size": 3},
                {"uri": "skill://a/pdf/t/x.md", "digest": "sha256:1", "size": 4},
                {"uri": "skill://a/pdf/t/r/y.md", "digest": "sha256:2", "size": 5},
            ],
        }))
        .unwrap();
        let skills = Skills::from_manifests(vec![skill]);
        let listed: Vec<String> = skills
            .directories
            .iter()
            .map(|d| {
                let children: Vec<String> = d
                    .children
                    .iter()
                    .map(|c| format!("{} {}", c.name, c.mime_type.as_deref().unwrap_or("-")))
                    .collect();
                format!("{}: {}", d.uri, children.join(", "))
            })
            .collect();
        assert_eq!(
            listed,
            [
                "skill://a/pdf: SKILL.md text/markdown, t inode/directory",
                "skill://a/pdf/t: r inode/directory, x.md -",
                "skill://a/pdf/t/r: y.md -",
            ]
        );
    }

    #[test]
    fn overrides_take_exactly_the_policy_keys() {
        for key in ToolPolicy::KEYS {
            let o: Result<PolicyOverride, _> = serde_json::from_value(json!({ *key: null }));
            assert!(o.is_ok(), "{key}");
        }
        assert!(serde_json::from_value::<PolicyOverride>(json!({"timout_ms": 1})).is_err());
        let o: PolicyOverride = serde_json::from_value(json!({"confirm": true, "task": "optional"})).unwrap();
        let mut policy = ToolPolicy { timeout_ms: Some(5), ..ToolPolicy::default() };
        o.apply_to(&mut policy);
        assert_eq!((policy.confirm, policy.task, policy.timeout_ms), (true, TaskSupport::Optional, Some(5)));
    }
}
