//! What the registry derives from a tool's input schema at load time: the validator (checked
//! at load, compiled on first use, shared between identical schemas) and the `x-mcp-header` arguments mirrored into `Mcp-Param-*` headers (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers; basic § JSON Schema usage).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use axum::http::HeaderName;
use mcp_adapter_api::{Problems, SchemaRole, schema_problems};
use mcp_protocol::headers::{X_MCP_HEADER, is_token};
use serde_json::Value;

/// The JSON type of a header-mirrored argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Compared as text.
    String,
    /// Compared numerically (`42` equals `42.0`).
    Integer,
    /// `true` / `false`.
    Boolean,
}

/// One `x-mcp-header` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// Full header name, e.g. `mcp-param-region`.
    pub header: HeaderName,
    /// The name as written in the schema, for messages (`Mcp-Param-Region`).
    pub display: String,
    /// Top-level property name.
    pub property: String,
    /// Its JSON type.
    pub kind: ParamKind,
}

/// Checks the rules for schemas we publish and extracts the header arguments.
/// `x-mcp-header` may only sit on `string`/`integer`/`boolean` properties reachable from the
/// root through `properties` (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers); we publish top-level ones, which covers every
/// property a header can address without crossing `items`/combinators.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut params: Vec<HeaderParam> = Vec::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(params);
    };
    for (property, sub) in props {
        let Some(name) = sub.get(X_MCP_HEADER) else {
            reject_nested(sub, property)?;
            continue;
        };
        let name = name.as_str().filter(|n| is_token(n)).ok_or_else(|| {
            format!("property '{property}': {X_MCP_HEADER} must be a non-empty HTTP token (letters, digits, -_.!#$%&'*+^`|~)")
        })?;
        let kind = match sub.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            other => {
                return Err(format!(
                    "property '{property}': {X_MCP_HEADER} is only allowed on string, integer or boolean properties, not {}",
                    other.unwrap_or("an untyped property")
                ));
            }
        };
        // Every HTTP token is a valid header name (RFC 9110 §5.1), lower-cased by `from_bytes`.
        let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes())
            .map_err(|_| format!("property '{property}': {X_MCP_HEADER} '{name}' is not a valid header name"))?;
        if params.iter().any(|p| p.header == header) {
            return Err(format!("{X_MCP_HEADER} '{name}' is used twice (names are case-insensitive)"));
        }
        params.push(HeaderParam { header, display: format!("Mcp-Param-{name}"), property: property.clone(), kind });
    }
    Ok(params)
}

/// `x-mcp-header` below the top level cannot be honoured by clients: refuse it at load time.
fn reject_nested(schema: &Value, path: &str) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k == X_MCP_HEADER {
                    return Err(format!("{path}: {X_MCP_HEADER} is only supported on top-level properties"));
                }
                reject_nested(v, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|v| reject_nested(v, path)),
        _ => Ok(()),
    }
}

/// Compiles the argument validator. Remote `$ref`s are never fetched (MCP 2026-07-28 basic § JSON Schema usage): the
/// crate is built without its HTTP resolver, so such a schema fails here.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("inputSchema must have \"type\": \"object\" at its root".to_owned());
    }
    jsonschema::validator_for(schema).map_err(|e| format!("inputSchema is not a valid JSON Schema: {e}"))
}

/// A validator compiled on first use. A compiled `jsonschema::Validator` is most of what a
/// tool costs at rest (measured by `benches/tool_memory.rs`), and most tools of a large
/// catalog are never called on a given replica; the schema was compiled once at load, so a
/// bad one still stops the load.
#[derive(Debug)]
pub struct LazyValidator {
    schema: Arc<Value>,
    output: bool,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl LazyValidator {
    /// The compiled validator (compiled now on the first call). An error only if compiling
    /// fails now where it passed at load (it does not: compiling is deterministic).
    pub fn get(&self) -> Result<&jsonschema::Validator, &str> {
        self.compiled
            .get_or_init(|| if self.output { compile_output(&self.schema) } else { compile(&self.schema) })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Interns validators by schema text during one registry build: tools whose schemas are
/// equal (operations of one API taking the same parameters) share one validator, checked
/// and later compiled once.
#[derive(Default)]
pub struct Validators {
    by_schema: HashMap<(bool, String), Arc<LazyValidator>>,
}

impl Validators {
    /// The input validator for `schema`, checked now: every problem, at its key below
    /// `input_schema` (`input_schema.properties.text.type`).
    pub fn input(&mut self, schema: &Arc<Value>) -> Result<Arc<LazyValidator>, Problems> {
        self.intern(schema, false)
    }

    /// The output validator for `schema` (problems below `output_schema`).
    pub fn output(&mut self, schema: &Arc<Value>) -> Result<Arc<LazyValidator>, Problems> {
        self.intern(schema, true)
    }

    fn intern(&mut self, schema: &Arc<Value>, output: bool) -> Result<Arc<LazyValidator>, Problems> {
        // serde_json's maps are sorted, so equal schemas have equal text.
        let key = (output, schema.to_string());
        if let Some(v) = self.by_schema.get(&key) {
            return Ok(Arc::clone(v));
        }
        let (role, at) =
            if output { (SchemaRole::Output, "output_schema") } else { (SchemaRole::Input, "input_schema") };
        let problems: Problems = schema_problems(schema, role).into_iter().collect();
        if !problems.is_empty() {
            return Err(problems.under(at));
        }
        let v = Arc::new(LazyValidator { schema: Arc::clone(schema), output, compiled: OnceLock::new() });
        self.by_schema.insert(key, Arc::clone(&v));
        Ok(v)
    }
}

fn compile_output(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("outputSchema is not a valid JSON Schema: {e}"))
}

/// Checks one value against a property's schema of `root` (a fixed argument of a virtual
/// endpoint); the property's `$ref`s into the root's `$defs` or `definitions` resolve.
pub fn check_value(root: &Value, property: &Value, value: &Value) -> Result<(), String> {
    let mut schema = property.clone();
    if let Some(obj) = schema.as_object_mut() {
        for defs in ["$defs", "definitions"] {
            if let Some(d) = root.get(defs) {
                obj.entry(defs).or_insert_with(|| d.clone());
            }
        }
    }
    let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
    validator.validate(value).map_err(|e| e.to_string())
}

/// Validates arguments (an object); the error names the offending field and what is wrong.
pub fn validate(validator: &jsonschema::Validator, arguments: &Value, tool: &str) -> Result<(), (String, String)> {
    let Err(e) = validator.validate(arguments) else {
        return Ok(());
    };
    let path = e.instance_path().to_string();
    let field =
        if path.is_empty() { missing_field(&e.to_string()) } else { path.trim_start_matches('/').replace('/', ".") };
    let at = if field.is_empty() { String::new() } else { format!(" at '{field}'") };
    Err((field, format!("Invalid arguments for tool '{tool}'{at}: {e}")))
}

/// When every validation error is a missing required top-level property, those properties
/// (what an elicitation form can ask for); `None` when anything else is wrong too.
pub fn missing_required(validator: &jsonschema::Validator, arguments: &Value) -> Option<Vec<String>> {
    let mut missing = Vec::new();
    for e in validator.iter_errors(arguments) {
        match e.kind() {
            jsonschema::error::ValidationErrorKind::Required { property }
                if e.instance_path().to_string().is_empty() =>
            {
                missing.push(property.as_str()?.to_owned());
            }
            _ => return None,
        }
    }
    (!missing.is_empty()).then_some(missing)
}

/// A flat elicitation form (MCP 2026-07-28 basic/patterns/mrtr § Input requests: primitive properties only) asking for `properties` of
/// `schema`; `None` when one of them is not a primitive a form can carry.
pub fn elicitation_form(schema: &Value, properties: &[String]) -> Option<Value> {
    const KEEP: &[&str] =
        &["type", "title", "description", "enum", "minimum", "maximum", "minLength", "maxLength", "format", "default"];
    let mut form = serde_json::Map::new();
    for name in properties {
        let prop = schema.get("properties")?.get(name)?.as_object()?;
        let primitive =
            matches!(prop.get("type").and_then(Value::as_str), Some("string" | "number" | "integer" | "boolean"));
        if !primitive {
            return None;
        }
        let mut field: serde_json::Map<String, Value> =
            prop.iter().filter(|(k, _)| KEEP.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
        if let Some(f) = field.get("format").and_then(Value::as_str)
            && !matches!(f, "email" | "uri" | "date" | "date-time")
        {
            field.remove("format");
        }
        field.entry("title").or_insert_with(|| Value::String(name.clone()));
        form.insert(name.clone(), Value::Object(field));
    }
    Some(serde_json::json!({"type": "object", "properties": form, "required": properties}))
}

/// `"region" is a required property` → `region`.
fn missing_field(message: &str) -> String {
    message.strip_prefix('"').and_then(|m| m.split_once('"')).map(|(f, _)| f.to_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_params_follow_the_rules() {
        let ok = json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}});
        let p = header_params(&ok).unwrap();
        assert_eq!(p.len(), 2);
        assert!(p.iter().any(|h| h.header == "mcp-param-region" && h.kind == ParamKind::String));
        for bad in [
            json!({"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}),
            json!({"type":"object","properties":{"x":{"type":"string","x-mcp-header":"has space"}}}),
            json!({"type":"object","properties":{"x":{"type":"string","x-mcp-header":"A"},"y":{"type":"string","x-mcp-header":"a"}}}),
            json!({"type":"object","properties":{"x":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
        ] {
            assert!(header_params(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn missing_primitives_become_a_form() {
        let schema = json!({"type":"object","properties":{"name":{"type":"string","description":"Who"},"n":{"type":"integer","minimum":1},"tags":{"type":"array"}},"required":["name","n"]});
        let v = compile(&schema).unwrap();
        assert_eq!(missing_required(&v, &json!({})).unwrap(), ["name", "n"]);
        assert!(missing_required(&v, &json!({"n": "x"})).is_none(), "a wrong type is not just missing");
        assert!(missing_required(&v, &json!({"name": "a", "n": 1})).is_none());
        let form = elicitation_form(&schema, &["name".into(), "n".into()]).unwrap();
        assert_eq!(form["properties"]["name"], json!({"type":"string","description":"Who","title":"name"}));
        assert_eq!(form["required"], json!(["name", "n"]));
        assert!(elicitation_form(&schema, &["tags".into()]).is_none());
    }

    #[test]
    fn validation_names_the_field() {
        let v =
            compile(&json!({"type":"object","properties":{"region":{"type":"string"}},"required":["region"]})).unwrap();
        assert_eq!(validate(&v, &json!({}), "t").unwrap_err().0, "region");
        assert_eq!(validate(&v, &json!({"region": 5}), "t").unwrap_err().0, "region");
        assert!(validate(&v, &json!({"region": "eu"}), "t").is_ok());
        assert!(compile(&json!({"type":"string"})).is_err());
        assert!(compile(&json!({"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}})).is_err());
    }

    #[test]
    fn equal_schemas_share_one_validator_compiled_on_first_use() {
        let mut v = Validators::default();
        let a = Arc::new(json!({"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}));
        let same = Arc::new(json!({"required":["x"],"properties":{"x":{"type":"string"}},"type":"object"}));
        let other = Arc::new(json!({"type":"object"}));
        let (va, vs, vo) = (v.input(&a).unwrap(), v.input(&same).unwrap(), v.input(&other).unwrap());
        assert!(Arc::ptr_eq(&va, &vs), "key order does not matter");
        assert!(!Arc::ptr_eq(&va, &vo));
        assert!(!Arc::ptr_eq(&va, &v.output(&a).unwrap()), "an output schema has its own rules");
        assert!(va.compiled.get().is_none(), "nothing compiled at load");
        assert_eq!(validate(va.get().unwrap(), &json!({}), "t").unwrap_err().0, "x");
        assert!(vs.compiled.get().is_some(), "compiled once for both tools");
        assert!(v.input(&Arc::new(json!({"type":"string"}))).is_err(), "still checked at load");
        assert!(v.output(&Arc::new(json!({"type": 5}))).is_err());
    }
}
