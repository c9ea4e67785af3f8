//! A tool's JSON Schemas checked before anything is served, every problem with the key it is
//! at inside the schema (`properties.text.type`) and in plain words, not the metaschema's.
//!
//! MCP 2026-07-28 server/tools § Tool: `inputSchema` is a JSON Schema object whose root is
//! `"type": "object"`; schemas without `$schema` are JSON Schema 2020-12 (basic § JSON Schema
//! usage). Remote `$ref`s are never fetched (the validator is built without a resolver that
//! could), so one that is not inside the schema is a problem here.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::problems::{ConfigProblem, closest};

/// The type names JSON Schema knows.
const TYPES: [&str; 7] = ["array", "boolean", "integer", "null", "number", "object", "string"];

/// Which schema of a tool is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaRole {
    /// `input_schema`: its root must be `"type": "object"`.
    Input,
    /// `output_schema` (describes `structuredContent`, an object as well).
    Output,
}

/// Every problem of `schema`, keys relative to it (`properties.text.type`; empty for the
/// root); none means the runtime can compile it.
pub fn schema_problems(schema: &Value, role: SchemaRole) -> Vec<ConfigProblem> {
    let mut out: Vec<ConfigProblem> = Vec::new();
    let Some(root) = schema.as_object() else {
        return vec![ConfigProblem::new("", format!("must be a JSON Schema object, not {}", kind_of(schema)))];
    };
    if role == SchemaRole::Input && root.get("type").and_then(Value::as_str) != Some("object") {
        // A wrong type name is reported below with its own words.
        let named = root.get("type").and_then(Value::as_str).is_some_and(|t| !TYPES.contains(&t));
        if !named {
            out.push(ConfigProblem::new(
                if root.contains_key("type") { "type" } else { "" },
                "an input schema's root must be `\"type\": \"object\"`: tools take named arguments",
            ));
        }
    }
    let meta = match jsonschema::meta::validator_for(schema) {
        Ok(meta) => meta,
        Err(e) => {
            out.push(ConfigProblem::new("$schema", format!("cannot check it against its metaschema: {e}")));
            return out;
        }
    };
    for error in meta.iter_errors(schema) {
        let key = dotted(error.instance_path().as_str());
        if out.iter().any(|p| p.key == key) {
            continue;
        }
        out.push(explain(key, error.instance(), error.kind(), &error.to_string()));
    }
    if out.is_empty()
        && let Err(e) = jsonschema::validator_for(schema)
    {
        let at = dotted(e.schema_path().as_str());
        out.push(match e.kind() {
            ValidationErrorKind::Referencing(r) => ConfigProblem::new(
                at,
                format!("cannot resolve this reference ({r}); only references inside the schema are followed"),
            ),
            kind => explain(at, e.instance(), kind, &e.to_string()),
        });
    }
    out
}

/// One metaschema error in plain words.
fn explain(key: String, instance: &Value, kind: &ValidationErrorKind, fallback: &str) -> ConfigProblem {
    let last = key.rsplit('.').next().unwrap_or_default();
    if last == "type" {
        let bad = match instance {
            Value::String(s) => Some(s.as_str()),
            Value::Array(items) => items.iter().filter_map(Value::as_str).find(|t| !TYPES.contains(t)),
            _ => None,
        };
        let expected = TYPES.join(", ");
        return match bad {
            Some(name) => {
                let problem =
                    ConfigProblem::new(key, format!("`{name}` is not a JSON Schema type; expected one of {expected}"));
                match closest(name, TYPES) {
                    Some(near) => problem.help(format!("did you mean `{near}`?")),
                    None => problem,
                }
            }
            None => ConfigProblem::new(key, format!("must be a type name ({expected}) or a list of them")),
        };
    }
    let problem = match kind {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => article(&t.to_string()),
                TypeKind::Multiple(set) => set.iter().map(|t| article(&t.to_string())).collect::<Vec<_>>().join(" or "),
            };
            format!("must be {expected}, not {}", kind_of(instance))
        }
        ValidationErrorKind::Format { format } if format == "regex" => {
            format!("{instance} is not a valid regular expression")
        }
        ValidationErrorKind::UniqueItems => "lists the same item twice".to_owned(),
        ValidationErrorKind::MinItems { limit } => format!("must list at least {limit} item(s)"),
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}"),
        _ => fallback.to_owned(),
    };
    ConfigProblem::new(key, problem)
}

/// `/properties/text/type` → `properties.text.type`.
fn dotted(pointer: &str) -> String {
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn article(name: &str) -> String {
    match name {
        "array" | "integer" | "object" => format!("an {name}"),
        "null" => "null".to_owned(),
        _ => format!("a {name}"),
    }
}

/// How a value is named in a message: its JSON type with an article.
fn kind_of(value: &Value) -> String {
    article(match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(schema: Value) -> Vec<(String, String, Option<String>)> {
        schema_problems(&schema, SchemaRole::Input).into_iter().map(|p| (p.key, p.problem, p.help)).collect()
    }

    #[test]
    fn a_valid_schema_has_no_problem() {
        assert!(problems(json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})).is_empty());
    }

    #[test]
    fn every_problem_is_at_its_key_in_plain_words() {
        let got = problems(json!({
            "type": "object",
            "properties": {"text": {"type": "strng"}, "n": {"type": "integer", "minimum": "1"}},
            "required": "text",
        }));
        assert_eq!(got.len(), 3, "{got:?}");
        let text = got.iter().find(|p| p.0 == "properties.text.type").expect("type problem");
        assert!(text.1.starts_with("`strng` is not a JSON Schema type; expected one of array, boolean"), "{text:?}");
        assert_eq!(text.2.as_deref(), Some("did you mean `string`?"));
        let min = got.iter().find(|p| p.0 == "properties.n.minimum").expect("minimum problem");
        assert_eq!(min.1, "must be a number, not a string");
        let req = got.iter().find(|p| p.0 == "required").expect("required problem");
        assert_eq!(req.1, "must be an array, not a string");
    }

    #[test]
    fn input_roots_are_objects_and_refs_stay_inside() {
        assert_eq!(problems(json!({"type": "string"}))[0].0, "type");
        assert_eq!(problems(json!({}))[0].0, "");
        assert!(problems(json!({"type": "object", "pattern": "["}))[0].1.contains("regular expression"));
        let r = problems(json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}));
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].1.contains("only references inside the schema"), "{r:?}");
        assert!(schema_problems(&json!({"type": "string"}), SchemaRole::Output).is_empty());
    }
}
