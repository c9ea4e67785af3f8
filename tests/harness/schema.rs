//! Validation of wire messages against the official `schema-2026-07-28.json` (and the tasks
//! extension schema), by `$defs` name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::paths;

fn document(file: &str) -> Value {
    let path = paths::shared().join("spec").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("schema is JSON")
}

fn validator(file: &'static str, def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let key = format!("{file}#{def}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().expect("lock").get(&key) {
        return Arc::clone(v);
    }
    let mut doc = document(file);
    assert!(doc["$defs"].get(def).is_some(), "{file} has no $defs/{def}");
    doc["$ref"] = Value::String(format!("#/$defs/{def}"));
    let v = Arc::new(jsonschema::validator_for(&doc).expect("schema compiles"));
    cache.lock().expect("lock").insert(key, Arc::clone(&v));
    v
}

/// Panics with every violation when `message` does not match `$defs/<def>` of the core schema.
pub fn assert_valid(def: &str, message: &Value) {
    assert_valid_in("schema-2026-07-28.json", def, message);
}

/// Same, against the tasks extension schema.
pub fn assert_valid_tasks(def: &str, value: &Value) {
    assert_valid_in("schema-ext-tasks-draft.json", def, value);
}

fn assert_valid_in(file: &'static str, def: &str, message: &Value) {
    let v = validator(file, def);
    let errors: Vec<String> = v.iter_errors(message).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{def} violations:\n  {}\nmessage: {message}", errors.join("\n  "));
}

/// The response `$defs` name for a result of `method` (e.g. `tools/call` → `CallToolResultResponse`).
pub fn response_def(method: &str) -> &'static str {
    match method {
        "server/discover" => "DiscoverResultResponse",
        "tools/list" => "ListToolsResultResponse",
        "tools/call" => "CallToolResultResponse",
        "resources/list" => "ListResourcesResultResponse",
        "resources/templates/list" => "ListResourceTemplatesResultResponse",
        "resources/read" => "ReadResourceResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        "prompts/get" => "GetPromptResultResponse",
        "completion/complete" => "CompleteResultResponse",
        other => panic!("no response schema known for {other}"),
    }
}

/// Validates a final message: results against the method's response type, errors against
/// the specific error type when the code has one.
pub fn assert_response(method: &str, message: &Value) {
    match message.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64) {
        Some(-32020) => assert_valid("HeaderMismatchError", message),
        Some(-32021) => assert_valid("MissingRequiredClientCapabilityError", message),
        Some(-32022) => assert_valid("UnsupportedProtocolVersionError", message),
        Some(_) => assert_valid("JSONRPCErrorResponse", message),
        None => assert_valid(response_def(method), message),
    }
}
