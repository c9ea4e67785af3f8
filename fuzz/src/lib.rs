//! Fuzz targets over everything that parses outside input. Each target is a function of the
//! raw input bytes that returns normally for every input and panics only when a property
//! breaks (a panic in the code under test is a finding too). Two engines run them: cargo-fuzz
//! with libFuzzer, coverage-guided (`fuzz/libfuzzer`, `fuzz/run.sh`), and a bounded stable
//! smoke of mutated seed inputs (`tests/smoke.rs`, run by the test command).
//!
//! The seed corpus of each target is `fuzz/corpus/<target>/`.

use std::sync::OnceLock;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue};
use mcp_runtime::config::{Config, RequestStateConfig, Secret};
use mcp_runtime::http::inbound::typed_read_agrees;
use mcp_runtime::http::legacy::session;
use mcp_runtime::mrtr::seal::{Binding, Sealer};
use serde_json::{Map, Value, json};

/// A target: takes any bytes.
pub type Target = fn(&[u8]);

/// Every target by name (the names of `fuzz/corpus/*` and `fuzz/libfuzzer/fuzz_targets/*`).
pub const TARGETS: &[(&str, Target)] = &[
    ("envelope", envelope),
    ("request_state", request_state),
    ("session_id", session_id),
    ("cli_argv", cli_argv),
    ("cli_paths", cli_paths),
    ("rest_template", rest_template),
    ("schema_validation", schema_validation),
    ("config", config),
];

/// The HTTP request envelope: the typed fast path accepts only what the `Value` path reads
/// the same way (differential), for the body as given.
pub fn envelope(data: &[u8]) {
    let mut headers = HeaderMap::new();
    headers.insert("mcp-protocol-version", HeaderValue::from_static("2026-07-28"));
    if let Err(e) = typed_read_agrees(&headers, data) {
        panic!("{e}");
    }
}

fn sealer() -> &'static Sealer {
    static SEALER: OnceLock<Sealer> = OnceLock::new();
    SEALER.get_or_init(|| {
        Sealer::new(&RequestStateConfig {
            ttl: Duration::from_secs(600),
            max_bytes: 64 * 1024,
            keys: vec![("k1".into(), Secret::new(vec![7u8; 32]))],
        })
    })
}

/// Whether an object in `value` has serde_json's reserved key `$serde_json::private::RawValue`.
/// With serde_json's `raw_value` feature (the runtime's), an object whose *first* key it is
/// parses as a raw value, not as an object; sealing writes keys sorted, which can put it
/// first, so such a state opens to an error instead of to itself (found by this target,
/// `corpus/request_state/serde-json-reserved-key`). A known limit: a state holding that key
/// is refused when it comes back (`Integrity`), never mistaken for another.
fn names_serde_json_raw_value(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.contains_key("$serde_json::private::RawValue") || map.values().any(names_serde_json_raw_value)
        }
        Value::Array(items) => items.iter().any(names_serde_json_raw_value),
        _ => false,
    }
}

/// Sealed `requestState`: any token opens to an error or (when it is a real one) to the
/// state it sealed; a state sealed from the input opens to itself, and not under another
/// binding.
pub fn request_state(data: &[u8]) {
    let sealer = sealer();
    let arguments = json!({"a": 1});
    let binding =
        Binding { method: "tools/call", target: "echo", arguments: &arguments, principal: None, endpoint: None };
    let text = String::from_utf8_lossy(data);
    let _ = sealer.open(&text, &binding);
    let state = serde_json::from_slice::<Value>(data).unwrap_or_else(|_| Value::String(text.clone().into_owned()));
    let token = sealer.seal(&binding, &state);
    if !names_serde_json_raw_value(&state) {
        assert_eq!(sealer.open(&token, &binding).as_ref(), Ok(&state), "a sealed state opens to itself");
    }
    let other = Binding { target: "other", ..binding };
    assert!(sealer.open(&token, &other).is_err(), "a state opens only for its binding");
    // A token with one byte changed, at a place and to a value the input picks.
    if let (Some(&at), Some(&to)) = (data.first(), data.get(1)) {
        let mut bytes = token.into_bytes();
        let i = usize::from(at) % bytes.len();
        if bytes[i] != to {
            bytes[i] = to;
            if let Ok(forged) = String::from_utf8(bytes) {
                assert!(sealer.open(&forged, &binding).is_err(), "a changed token is refused");
            }
        }
    }
}

/// 2025-era sealed session ids (`Mcp-Session-Id`): any header value is refused or opens to
/// a session; a minted one opens to itself.
pub fn session_id(data: &[u8]) {
    let sealer = sealer();
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_bytes(data) {
        headers.insert(session::HEADER, v);
        let _ = session::open(sealer, &headers, None, None);
        let _ = session::open(sealer, &headers, Some("alice"), Some("/mcp/support"));
    }
    let info = serde_json::from_slice::<Value>(data).unwrap_or(Value::Null);
    let minted = session::Session {
        version: "2025-11-25".into(),
        capabilities: json!({}),
        client_info: info,
        principal: None,
        endpoint: None,
        exp: session::expiry(),
    };
    if let Some(token) = session::mint(sealer, &minted) {
        headers.insert(session::HEADER, HeaderValue::from_str(&token).expect("a token is a header value"));
        let opened = session::open(sealer, &headers, None, None).expect("a minted session id opens");
        assert_eq!(opened.session.client_info, minted.client_info);
        assert!(session::open(sealer, &headers, Some("alice"), None).is_err(), "bound to its caller");
        assert!(session::open(sealer, &headers, None, Some("/mcp/support")).is_err(), "bound to its endpoint");
    }
}

/// The input as a JSON object, or nothing.
fn object(data: &[u8]) -> Option<Map<String, Value>> {
    match serde_json::from_slice(data) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// CLI argv templates: `{"args": [...], "schema": {...}, "arguments": {...}}`. Parsing
/// checks the template against the schema; rendering gives argv entries without NUL bytes
/// or refuses with a tool error.
pub fn cli_argv(data: &[u8]) {
    let Some(input) = object(data) else { return };
    let args = input.get("args").and_then(Value::as_array).cloned().unwrap_or_default();
    let schema = input.get("schema").cloned().unwrap_or_else(|| json!({"type": "object"}));
    let Ok(template) = mcp_adapter_cli::template::Template::parse(&args, &schema) else { return };
    let arguments = input.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
    if let Ok(argv) = template.render(&arguments, &[]) {
        assert!(argv.iter().all(|a| !a.contains('\0')), "NUL in {argv:?}");
    }
}

/// REST path and query templates: a parsed path renders each value into its one segment
/// (no `/`, `?` or `#` from a value), and any template text parses or is refused.
pub fn rest_template(data: &[u8]) {
    use mcp_adapter_rest::template::{PathTemplate, QueryParam, Template};
    let text = String::from_utf8_lossy(data);
    let (template, value) = text.split_once('\n').unwrap_or((&text, "x/../?#%2F"));
    let mut arguments = Map::new();
    arguments.insert("v".into(), Value::String(value.to_owned()));
    if let Ok(path) = PathTemplate::parse(template) {
        let vars: Vec<String> = path.vars().map(str::to_owned).collect();
        for v in &vars {
            arguments.insert(v.clone(), Value::String(value.to_owned()));
        }
        let mut out = String::new();
        let _ = path.render(&arguments, &mut out);
    }
    let fixed = PathTemplate::parse("/users/{v}/items").expect("a valid path template");
    let mut out = String::new();
    if fixed.render(&arguments, &mut out).is_ok() {
        assert_eq!(out.matches('/').count(), 3, "one segment: {out}");
        assert!(!out.contains(['?', '#']), "no query or fragment from a value: {out}");
        assert!(!out.split('/').any(|s| s == ".." || s == "."), "no dot segment from a value: {out}");
    }
    if let Ok(t) = Template::parse(template) {
        let q = QueryParam::new("q", t);
        let mut out = String::new();
        if q.render(&arguments, &mut out).is_ok() {
            assert!(!out.contains(['&', '#', ' ']) || out.is_empty(), "one query pair: {out}");
        }
    }
}

/// JSON Schema argument validation: `{"schema": ..., "arguments": ...}`; a schema compiles
/// or is refused, arguments validate or are refused with a message.
pub fn schema_validation(data: &[u8]) {
    let Some(input) = object(data) else { return };
    let schema = input.get("schema").cloned().unwrap_or(Value::Bool(true));
    let Ok(validator) = mcp_runtime::registry::tool_schema::compile(&schema) else { return };
    let arguments = input.get("arguments").cloned().unwrap_or(Value::Null);
    let _ = mcp_runtime::registry::tool_schema::validate(&validator, &arguments, "fuzzed");
    let _ = mcp_runtime::registry::tool_schema::missing_required(&validator, &arguments);
}

/// The config file: any text loads or is refused with an error naming a key.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = Config::from_toml(text) {
        assert!(!e.to_string().is_empty());
    }
}

/// A tree for [`cli_paths`], made once per process: `root/` with directories, files and
/// symbolic links that stay inside (relative, through `..`, chained) or lead out (relative,
/// absolute, a magic link, a loop), beside `outside/secret`. Returns the root's handle and
/// the (device, inode) of everything beneath it.
fn paths_tree() -> &'static (std::os::fd::OwnedFd, std::collections::HashSet<(u64, u64)>) {
    use std::os::unix::fs::{MetadataExt as _, symlink};
    static TREE: OnceLock<(std::os::fd::OwnedFd, std::collections::HashSet<(u64, u64)>)> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mcp-fuzz-paths-{}", std::process::id()));
        let root = dir.join("root");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(root.join("a/b/c")).expect("tree");
        std::fs::create_dir_all(dir.join("outside")).expect("tree");
        std::fs::write(root.join("a/b/c/f"), "in").expect("tree");
        std::fs::write(root.join("a/g"), "in").expect("tree");
        std::fs::write(dir.join("outside/secret"), "out").expect("tree");
        for (target, name) in [
            ("a/b", "l1"),
            ("../..", "a/b/c/up2"),
            ("../g", "a/b/lg"),
            ("l1/c", "a/l1c"),
            ("../outside", "out"),
            ("../../../outside/secret", "a/b/out3"),
            ("/etc", "abs"),
            ("/proc/self/root", "magic"),
            ("loop", "loop"),
            (".", "dot"),
        ] {
            symlink(target, root.join(name)).expect("tree");
        }
        let mut inside = std::collections::HashSet::new();
        let mut todo = vec![root.clone()];
        while let Some(p) = todo.pop() {
            let m = std::fs::symlink_metadata(&p).expect("walk tree");
            inside.insert((m.dev(), m.ino()));
            if m.is_dir() {
                todo.extend(std::fs::read_dir(&p).expect("walk tree").map(|e| e.expect("entry").path()));
            }
        }
        (mcp_adapter_cli::beneath::open_dir(&root).expect("root"), inside)
    })
}

/// CLI path confinement: any relative path opens, by `openat2` and by the fallback walk
/// alike, to the same object beneath the root, or is refused by both; never to anything
/// outside (no link, `..` or magic link leads out).
pub fn cli_paths(data: &[u8]) {
    use mcp_adapter_cli::beneath::{Method, kernel_has_openat2, open};
    use std::os::fd::AsFd as _;
    use std::os::unix::ffi::OsStrExt as _;
    let (root, inside) = paths_tree();
    if data.contains(&0) {
        return;
    }
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(data));
    let id = |fd: &std::os::fd::OwnedFd| {
        use std::os::fd::AsRawFd as _;
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("stat the opened object");
        (m.dev(), m.ino())
    };
    let walked = open(root.as_fd(), path, Method::Walk);
    if let Ok(fd) = &walked {
        assert!(inside.contains(&id(fd)), "the walk opened {path:?} outside the root");
    }
    if kernel_has_openat2() {
        let kernel = open(root.as_fd(), path, Method::Auto);
        match (&walked, &kernel) {
            (Ok(w), Ok(k)) => assert_eq!(id(w), id(k), "{path:?} opened two different objects"),
            (Err(_), Err(_)) => {}
            _ => panic!("{path:?}: the walk gave {:?}, openat2 {:?}", walked.map(|_| ()), kernel.map(|_| ())),
        }
    }
}
