//! The import: every operation of the document becomes a tool (a REST [`Plan`] plus its
//! [`ToolSpec`]) or is left out with the reason, in a [`Report`].

use mcp_adapter_api::ToolSpec;
use mcp_adapter_api::protocol::{Tool, ToolAnnotations};
use mcp_adapter_rest::Plan;
use mcp_adapter_rest::operation::Operation;
use serde_json::{Map, Value, json};

use crate::config::{OperationRef, Selection};
use crate::names;
use crate::params::{self, Inputs};
use crate::schema::{Schemas, make_valid};
use crate::security::{self, Credentials};
use crate::servers;
use crate::source::Documents;

/// The methods of a path item, in the order OpenAPI lists them.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Which operations, and how descriptions are cut.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only operations matching this.
    pub include: Selection,
    /// No operation matching this.
    pub exclude: Selection,
    /// Only GET and HEAD.
    pub read_only: bool,
    /// Longest description carried over, in characters.
    pub max_description_chars: usize,
    /// Largest input schema, in bytes of JSON: the `$defs` farthest from the arguments are
    /// left out (unconstrained) beyond it.
    pub max_schema_bytes: usize,
    /// Operations and path items with `servers` of their own are sent there (false: the
    /// config's `http.base_urls` takes every operation).
    pub servers: bool,
}

/// What an import made and left out.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Operations in the document.
    pub operations: usize,
    /// Tools made.
    pub tools: usize,
    /// Operations left out: `METHOD /path` and why.
    pub left_out: Vec<(String, String)>,
    /// Bytes of `{"tools": [...]}` for the tools made.
    pub tools_list_bytes: usize,
    /// Schema keywords dropped because the 2020-12 metaschema refuses them.
    pub dropped_keywords: usize,
    /// `$ref`s that pointed nowhere.
    pub unresolved_refs: usize,
    /// Input schemas whose farthest `$defs` were left out to stay within `max_schema_bytes`.
    pub shortened_schemas: usize,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "operations found: {}, tools made: {}, left out: {}, tools/list: {} bytes",
            self.operations,
            self.tools,
            self.left_out.len(),
            self.tools_list_bytes
        )?;
        if self.dropped_keywords > 0 || self.unresolved_refs > 0 || self.shortened_schemas > 0 {
            write!(
                f,
                " ({} invalid schema keywords dropped, {} unresolved $refs, {} schemas shortened to max_schema_bytes)",
                self.dropped_keywords, self.unresolved_refs, self.shortened_schemas
            )?;
        }
        for (op, why) in &self.left_out {
            write!(f, "\n  left out {op}: {why}")?;
        }
        Ok(())
    }
}

/// The tools and the report.
#[derive(Debug)]
pub struct Imported {
    /// One plan and tool per selected operation.
    pub tools: Vec<(Plan, ToolSpec)>,
    /// What happened.
    pub report: Report,
}

/// The OpenAPI version, or why the document is refused.
pub fn version(root: &Value) -> Result<bool, String> {
    if let Some(v) = root.get("swagger") {
        return Err(format!(
            "this is a Swagger {} document; only OpenAPI 3.0 and 3.1 are supported (convert it first, e.g. with the \
             swagger2openapi tool)",
            v.as_str().unwrap_or("2.0")
        ));
    }
    match root.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.0") => Ok(true),
        Some(v) if v.starts_with("3.") => Ok(false),
        Some(v) => Err(format!("openapi version '{v}' is not supported (3.0 and 3.1 are)")),
        None => Err("not an OpenAPI document: it has no 'openapi' version field".to_owned()),
    }
}

/// Imports every selected operation of `docs`.
pub fn import(docs: &Documents, options: &Options, credentials: &dyn Credentials) -> Result<Imported, String> {
    let root = docs.root();
    let v30 = version(root)?;
    let mut schemas = Schemas::new(docs, v30);
    let mut report = Report::default();
    let mut made: Vec<(String, Plan, Tool)> = Vec::new();
    let mut wanted = Vec::new();
    let empty = Map::new();
    let paths = root.get("paths").and_then(Value::as_object).unwrap_or(&empty);
    for (path, item) in paths {
        let (item_doc, item) = match schemas.deref(0, item) {
            Ok(found) => found,
            Err(why) => {
                let label = format!("path item {path}");
                tracing::warn!(operation = %label, reason = %why, "OpenAPI operations left out");
                report.left_out.push((label, format!("its {why}")));
                continue;
            }
        };
        for method in METHODS {
            let Some(op) = item.get(method).filter(|o| o.is_object()) else { continue };
            report.operations += 1;
            let label = format!("{} {path}", method.to_ascii_uppercase());
            let tags: Vec<String> = op
                .get("tags")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            let operation_id = op.get("operationId").and_then(Value::as_str);
            let selected = OperationRef { method, path, operation_id, tags: &tags };
            let refusal = if let Some(why) = Selection::refuses(&options.include, &options.exclude, &selected) {
                Some(why.to_owned())
            } else if options.read_only && !matches!(method, "get" | "head") {
                Some("read_only is set".to_owned())
            } else if method == "trace" {
                Some("TRACE is not sent".to_owned())
            } else {
                None
            };
            if let Some(why) = refusal {
                report.left_out.push((label, why));
                continue;
            }
            match tool(&mut schemas, options, credentials, item_doc, item, op, method, path) {
                Ok((plan, tool, dropped, shortened)) => {
                    report.dropped_keywords += dropped;
                    report.shortened_schemas += usize::from(shortened);
                    wanted.push((names::candidate(operation_id, method, path), method.to_owned(), path.clone()));
                    made.push((label, plan, tool));
                }
                Err(why) => {
                    if why.contains("security scheme") || why.contains("$ref") {
                        tracing::warn!(operation = %label, reason = %why, "OpenAPI operation left out");
                    }
                    report.left_out.push((label, why));
                }
            }
        }
    }
    let names = names::assign(&wanted);
    let tools: Vec<(Plan, ToolSpec)> = made
        .into_iter()
        .zip(names)
        .map(|((_, plan, mut tool), name)| {
            tool.name = name;
            (plan, ToolSpec::new(tool))
        })
        .collect();
    report.tools = tools.len();
    report.unresolved_refs = schemas.unresolved;
    let listed: Vec<&Tool> = tools.iter().map(|(_, s)| &s.tool).collect();
    report.tools_list_bytes = serde_json::to_vec(&json!({ "tools": listed })).map_or(0, |b| b.len());
    Ok(Imported { tools, report })
}

/// One operation as a plan and a tool (named later), plus the keywords dropped.
#[allow(clippy::too_many_arguments)]
fn tool(
    schemas: &mut Schemas<'_>,
    options: &Options,
    credentials: &dyn Credentials,
    item_doc: usize,
    item: &Value,
    op: &Value,
    method: &str,
    path: &str,
) -> Result<(Plan, Tool, usize, bool), String> {
    let creds = security::for_operation(schemas.docs().root(), op, credentials)?;
    let max = options.max_description_chars;
    schemas.forget_unresolved();
    let Inputs { params, body, properties, required } = params::inputs(schemas, item_doc, item, op, max)?;
    let mut properties = Value::Object(properties);
    // An argument whose schema cannot be known is not guessed: the operation is left out.
    if let Some(why) = schemas.take_unresolved(&properties) {
        return Err(why);
    }
    let operation = Operation::new(path, params, body, creds)?;
    let mut plan = Plan::operation(method, operation)?;
    if options.servers
        && let Some(server) = servers::of_operation(schemas.docs(), item_doc, item, op)?
    {
        plan = plan.on_server(server);
    }
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    let (defs, shortened) = schemas.defs_within(&mut properties, options.max_schema_bytes);
    schema.insert("properties".to_owned(), properties);
    if !required.is_empty() {
        schema.insert("required".to_owned(), json!(required));
    }
    schema.insert("additionalProperties".to_owned(), json!(false));
    if !defs.is_empty() {
        schema.insert("$defs".to_owned(), Value::Object(defs));
    }
    let mut schema = Value::Object(schema);
    let mut dropped = make_valid(&mut schema)?;
    if jsonschema::validator_for(&schema).is_err() {
        // A `pattern` in a regex dialect the validator does not know is the usual cause.
        dropped += drop_key(&mut schema, "pattern");
        jsonschema::validator_for(&schema).map_err(|e| format!("the input schema cannot be compiled: {e}"))?;
    }
    let text = |k: &str| op.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let description = match (text("summary"), text("description")) {
        (Some(s), Some(d)) if !d.starts_with(s) => format!("{s}\n\n{d}"),
        (_, Some(d)) => d.to_owned(),
        (Some(s), None) => s.to_owned(),
        (None, None) => format!("{} {path}", method.to_ascii_uppercase()),
    };
    let tool = Tool {
        name: String::new(),
        title: None,
        description: Some(trim(&description, max)),
        input_schema: mcp_adapter_api::protocol::schema::intern(schema),
        output_schema: None,
        annotations: Some(annotations(method)),
        meta: None,
    };
    Ok((plan, tool, dropped, shortened))
}

/// `readOnlyHint`, `destructiveHint`, `idempotentHint` from the method's semantics
/// (RFC 9110 § 9.2); every OpenAPI tool reaches an outside system (`openWorldHint`).
fn annotations(method: &str) -> ToolAnnotations {
    let (read_only, destructive, idempotent) = match method {
        "get" | "head" | "options" => (true, false, true),
        "put" | "delete" => (false, true, true),
        "patch" => (false, true, false),
        _ => (false, false, false),
    };
    ToolAnnotations {
        read_only_hint: Some(read_only),
        destructive_hint: (!read_only).then_some(destructive),
        idempotent_hint: (!read_only).then_some(idempotent),
        open_world_hint: Some(true),
        ..ToolAnnotations::default()
    }
}

/// At most `max` characters, cut at a character boundary with an ellipsis.
pub fn trim(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((i, _)) => {
            let keep = text[..i].char_indices().nth(max.saturating_sub(1)).map_or(i, |(j, _)| j);
            format!("{}…", &text[..keep])
        }
    }
}

fn drop_key(v: &mut Value, key: &str) -> usize {
    match v {
        Value::Object(map) => {
            // Only the keyword (a string); a property named `pattern` is an object.
            let here = usize::from(map.get(key).is_some_and(Value::is_string) && map.remove(key).is_some());
            here + map.values_mut().map(|v| drop_key(v, key)).sum::<usize>()
        }
        Value::Array(items) => items.iter_mut().map(|v| drop_key(v, key)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_cuts_at_characters() {
        assert_eq!(trim("héllo", 10), "héllo");
        assert_eq!(trim("héllo", 3), "hé…");
        assert_eq!(trim("héllo", 3).chars().count(), 3);
    }

    #[test]
    fn versions() {
        assert!(version(&json!({"swagger": "2.0"})).unwrap_err().contains("Swagger 2.0"));
        assert!(version(&json!({"openapi": "3.0.3"})).unwrap());
        assert!(!version(&json!({"openapi": "3.1.0"})).unwrap());
        assert!(version(&json!({"openapi": "4.0"})).is_err());
        assert!(version(&json!({})).is_err());
    }
}
