//! The tool declaration config-driven adapters share (`[[adapters.tools]]`): name, title,
//! description, schemas, annotations and the runtime policy beside the kind's own keys,
//! with one guard against unknown keys.
//!
//! serde's `deny_unknown_fields` does not work together with `flatten`, so whatever no part
//! claims lands in [`ToolDecl::unknown`] and [`ToolDecl::check`] refuses it by name. For
//! that to work the kind's struct `K` must not use `flatten` itself (a flattened struct
//! with its own `flatten` reads every key without claiming any).

use schemars::JsonSchema;
use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_protocol::{Tool, ToolAnnotations, empty_object_schema};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::{ArgumentCheck, ConfigProblem, Problems, SchemaRole, ToolPolicy, ToolSpec, closest, schema_problems};

/// One tool as declared in config: the shared keys, the kind's keys `K`, the policy.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct ToolDecl<K> {
    /// Tool name, unique across the server.
    pub name: String,
    /// Display name.
    #[serde(default)]
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (root `"type": "object"`); default: no arguments.
    #[serde(default = "default_input_schema", deserialize_with = "mcp_protocol::schema::deserialize")]
    #[schemars(with = "Value")]
    pub input_schema: Arc<Value>,
    /// JSON Schema of `structuredContent`.
    #[serde(default, deserialize_with = "mcp_protocol::schema::deserialize_option")]
    #[schemars(with = "Option<Value>")]
    pub output_schema: Option<Arc<Value>>,
    /// Behaviour hints, with their wire names (`readOnlyHint`, `destructiveHint`, ...).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub annotations: Option<ToolAnnotations>,
    /// The kind's own keys (`executable`, `path`, ...).
    #[serde(flatten)]
    pub kind: K,
    /// Runtime policy common to every adapter kind (`confirm`, `timeout_ms`, ...).
    #[serde(flatten)]
    pub policy: ToolPolicy,
    /// Keys nobody claimed (typos): refused by [`ToolDecl::check`].
    #[serde(flatten)]
    #[schemars(skip)]
    pub unknown: BTreeMap<String, IgnoredAny>,
}

fn default_input_schema() -> Arc<Value> {
    mcp_protocol::schema::intern(empty_object_schema())
}

/// The kind-specific part of a tool declaration.
pub trait ToolKind {
    /// How messages name the kind (`CLI`, `REST`).
    const NAME: &'static str;
    /// The kind's keys, for the message about an unknown one.
    const KEYS: &'static [&'static str];
}

/// The keys every declaration has besides the kind's and the policy's.
pub const SHARED_KEYS: &[&str] = &["name", "title", "description", "input_schema", "output_schema", "annotations"];

impl<K: ToolKind> ToolDecl<K> {
    /// Every problem of the shared part: unknown keys (each named, with the near miss it
    /// probably is), an empty description, invalid schemas (each problem at its key inside
    /// the schema). Keys are relative to the tool (`timout_ms`, `input_schema.type`).
    pub fn check(&self) -> Problems {
        let mut problems = Problems::new();
        let known = [SHARED_KEYS, K::KEYS, ToolPolicy::KEYS].concat();
        for unknown in self.unknown.keys() {
            let problem = ConfigProblem::new(unknown, "unknown key").at_key();
            problems.push(match closest(unknown, known.iter().copied()) {
                Some(near) => problem.help(format!("did you mean `{near}`?")),
                None => problem.help(format!("a {} tool has: {}", K::NAME, known.join(", "))),
            });
        }
        if self.description.trim().is_empty() {
            problems.add("description", "say what the tool does: models choose tools by it");
        }
        for p in schema_problems(&self.input_schema, SchemaRole::Input) {
            problems.push(p.under("input_schema"));
        }
        if let Some(schema) = &self.output_schema {
            for p in schema_problems(schema, SchemaRole::Output) {
                problems.push(p.under("output_schema"));
            }
        }
        problems
    }
}

impl<K> ToolDecl<K> {
    /// What `tools/list` shows, plus the policy.
    pub fn spec(&self) -> ToolSpec {
        let tool = Tool {
            name: self.name.clone(),
            title: self.title.clone(),
            description: Some(self.description.clone()),
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            annotations: self.annotations.clone(),
            meta: None,
        };
        ToolSpec { tool, policy: self.policy.clone(), arguments: ArgumentCheck::Runtime }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Echo {
        text: String,
        #[serde(default)]
        loud: bool,
    }

    impl ToolKind for Echo {
        const NAME: &'static str = "test";
        const KEYS: &'static [&'static str] = &["text", "loud"];
    }

    fn decl(v: Value) -> ToolDecl<Echo> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn shared_kind_and_policy_keys_sit_side_by_side() {
        let d = decl(json!({"name": "e", "description": "d", "text": "hi", "timeout_ms": 5, "confirm": true}));
        assert_eq!(d.kind, Echo { text: "hi".into(), loud: false });
        assert_eq!((d.policy.timeout_ms, d.policy.confirm), (Some(5), true));
        assert_eq!(*d.input_schema, empty_object_schema());
        assert!(d.unknown.is_empty());
        assert!(d.check().is_empty());
        let spec = d.spec();
        assert_eq!((spec.tool.name.as_str(), spec.tool.description.as_deref()), ("e", Some("d")));
    }

    #[test]
    fn unknown_keys_and_empty_descriptions_are_refused_by_name() {
        let all = decl(json!({"name": "e", "description": " ", "text": "x", "timout_ms": 5, "zzz": 1})).check();
        let all: Vec<ConfigProblem> = all.into_iter().collect();
        assert_eq!(all.len(), 3, "{all:?}");
        assert_eq!((all[0].key.as_str(), all[0].at_key), ("timout_ms", true));
        assert_eq!(all[0].help.as_deref(), Some("did you mean `timeout_ms`?"));
        let zzz = all[1].help.as_deref().unwrap_or_default();
        assert!(zzz.starts_with("a test tool has:") && zzz.contains("text, loud") && zzz.contains("cache_ttl_ms"));
        assert_eq!(all[2].key, "description");
        assert!(serde_json::from_value::<ToolDecl<Echo>>(json!({"name": "e", "description": "d"})).is_err());
    }

    #[test]
    fn schemas_are_checked_at_their_keys() {
        let d = decl(json!({"name": "e", "description": "d", "text": "x",
            "input_schema": {"type": "object", "properties": {"t": {"type": "strng"}}},
            "output_schema": {"type": "object", "required": 5}}));
        let keys: Vec<String> = d.check().into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["input_schema.properties.t.type", "output_schema.required"]);
    }
}
