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

use crate::{ConfigProblem, ToolPolicy, ToolSpec};

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
    /// Refuses unknown keys (naming the key and listing the valid ones) and an empty
    /// description. Keys are relative to the tool (`timout_ms`).
    pub fn check(&self) -> Result<(), ConfigProblem> {
        if let Some(unknown) = self.unknown.keys().next() {
            let keys = [SHARED_KEYS, K::KEYS, ToolPolicy::KEYS].concat().join(", ");
            return Err(ConfigProblem::new(unknown, format!("unknown key; a {} tool has: {keys}", K::NAME)));
        }
        if self.description.trim().is_empty() {
            return Err(ConfigProblem::new("description", "say what the tool does: models choose tools by it"));
        }
        Ok(())
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
        ToolSpec { tool, policy: self.policy.clone() }
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
        d.check().unwrap();
        let spec = d.spec();
        assert_eq!((spec.tool.name.as_str(), spec.tool.description.as_deref()), ("e", Some("d")));
    }

    #[test]
    fn unknown_keys_and_empty_descriptions_are_refused_by_name() {
        let e = decl(json!({"name": "e", "description": "d", "text": "x", "timout_ms": 5})).check().unwrap_err();
        assert_eq!(e.key, "timout_ms");
        assert!(e.problem.starts_with("unknown key; a test tool has:") && e.problem.contains("text, loud"), "{e}");
        assert!(e.problem.contains("description") && e.problem.contains("cache_ttl_ms"), "{e}");
        let e = decl(json!({"name": "e", "description": " ", "text": "x"})).check().unwrap_err();
        assert_eq!(e.key, "description");
        assert!(serde_json::from_value::<ToolDecl<Echo>>(json!({"name": "e", "description": "d"})).is_err());
    }
}
