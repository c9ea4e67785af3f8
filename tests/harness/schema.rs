//! Validation of wire messages against the official JSON Schema of revision 2026-07-28 (and of
//! 2025-11-25 for legacy messages), by `$defs` name. The schema is never copied into this repository: `tests/interop/setup.sh`
//! installs it from the npm registry (the `@modelcontextprotocol/conformance` package ships the
//! official schema documents inside its bundle) and [`paths::schema_dir`] finds it.
//!
//! The `io.modelcontextprotocol/tasks` extension has no schema in any registry package, so its
//! result types are this project's own transcription of the extension's specification
//! (`tests/fixtures/schema/tasks-extension.json`), merged into the official core document so
//! that they build on its `Result`, `InputRequests` and `Error`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::paths;

/// The official core schema of 2026-07-28.
fn core() -> Value {
    official("schema-2026-07-28.json")
}

/// An official schema document `tests/interop/setup.sh` installed.
fn official(file: &str) -> Value {
    let path = paths::schema_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The core schema with the tasks extension's `$defs` added.
fn with_tasks() -> Value {
    let path = paths::repo().join("tests/fixtures/schema/tasks-extension.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let ext: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let mut doc = core();
    let defs = doc["$defs"].as_object_mut().expect("core $defs");
    for (name, def) in ext["$defs"].as_object().expect("extension $defs") {
        assert!(defs.insert(name.clone(), def.clone()).is_none(), "the tasks extension redefines core $defs/{name}");
    }
    doc
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Document {
    Core,
    Tasks,
    Legacy,
}

/// Compiled validators by document and `$defs` name.
type Cache = Mutex<HashMap<(Document, String), Arc<jsonschema::Validator>>>;

fn validator(document: Document, def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (document, def.to_owned());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().expect("lock").get(&key) {
        return Arc::clone(v);
    }
    let mut doc = match document {
        Document::Core => core(),
        Document::Tasks => with_tasks(),
        Document::Legacy => official("schema-2025-11-25.json"),
    };
    assert!(doc["$defs"].get(def).is_some(), "the schema has no $defs/{def}");
    doc["$ref"] = Value::String(format!("#/$defs/{def}"));
    let v = Arc::new(jsonschema::validator_for(&doc).expect("schema compiles"));
    cache.lock().expect("lock").insert(key, Arc::clone(&v));
    v
}

/// Panics with every violation when `message` does not match `$defs/<def>` of the core schema.
pub fn assert_valid(def: &str, message: &Value) {
    assert_valid_in(Document::Core, def, message);
}

/// Same, for a result type of the tasks extension (`CreateTaskResult`, `GetTaskResult`, …).
pub fn assert_valid_tasks(def: &str, value: &Value) {
    assert_valid_in(Document::Tasks, def, value);
}

/// Same, against the official schema of the previous revision, 2025-11-25.
pub fn assert_valid_legacy(def: &str, value: &Value) {
    assert_valid_in(Document::Legacy, def, value);
}

fn assert_valid_in(document: Document, def: &str, message: &Value) {
    let v = validator(document, def);
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
