//! Request shapes byte for byte (issue 30 items 4-7, 9, 10): a loopback upstream serves
//! tests/fixtures/openapi/request-shapes.yaml and records every other request that reaches it
//! (method, path and query, headers, body); each tool call's record is compared with what
//! OpenAPI 3.1's serialization rules give.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri, header};
use axum::response::IntoResponse;
use mcp_e2e::{Answer, Mcp, Server, run};
use serde_json::{Value, json};

use super::{fixture, ok};

const DOC: &str = "/openapi/request-shapes.yaml";

/// One request as the upstream received it.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    target: String,
    headers: HeaderMap,
    body: Bytes,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// Serves the document at [`DOC`], answers `{"ok": true}` to anything else and records it.
async fn upstream() -> (String, Log) {
    let doc = std::fs::read_to_string(fixture("request-shapes.yaml")).unwrap();
    let log: Log = Arc::default();
    let seen = Arc::clone(&log);
    let record = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let target = uri.path_and_query().map(ToString::to_string).unwrap_or_default();
        seen.lock().unwrap().push(Seen { method, target, headers, body });
        std::future::ready(([(header::CONTENT_TYPE, "application/json")], r#"{"ok":true}"#).into_response())
    };
    let app =
        axum::Router::new().route(DOC, axum::routing::get(move || std::future::ready(doc.clone()))).fallback(record);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), log)
}

/// The runtime with the document at a URL and no `http.base_urls`: the document's servers,
/// relative to that URL, decide where each operation goes.
async fn start() -> (Server, Mcp, Log) {
    let (base, log) = upstream().await;
    let config = format!("[[adapters]]\nname = \"shapes\"\nkind = \"openapi\"\nspec = \"{base}{DOC}\"\n");
    let server = Server::start(&config);
    let mcp = server.mcp();
    (server, mcp, log)
}

/// Calls `tool` and returns the one request it sent.
async fn sent(mcp: &Mcp, log: &Log, tool: &str, arguments: Value) -> Seen {
    let before = log.lock().unwrap().len();
    let answer = mcp.tool(tool, arguments).await;
    ok(&answer);
    let log = log.lock().unwrap();
    assert_eq!(log.len(), before + 1, "{tool} sent one request: {log:?}");
    log[before].clone()
}

fn refused(answer: &Answer) -> &str {
    assert_eq!(answer.error_code(), Some(-32602), "{:?}", answer.messages);
    answer.error_message()
}

// Multi-threaded: the upstream runs on this runtime while `Server::start` blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_body_follows_its_encoding_object() {
    let (_server, mcp, log) = start().await;
    let body = json!({
        "name": "Ada L", "address": {"city": "Paris"}, "metadata": {"order": "42"},
        "tags": ["a", "b"], "ids": [1, 2], "next": "/x/y",
    });
    let seen = sent(&mcp, &log, "createAccount", json!({"body": body})).await;
    assert_eq!((seen.method, seen.target.as_str()), (Method::POST, "/api/accounts"));
    assert_eq!(seen.headers[header::CONTENT_TYPE], "application/x-www-form-urlencoded");
    // address: deepObject (its encoding); metadata: an object with no encoding entry, written
    // deepObject too (docs/adapters/openapi.md); ids: pipeDelimited; next: allowReserved;
    // tags: the default, form and exploded (OpenAPI 3.1 § 4.8.15.1).
    assert_eq!(seen.body, "address[city]=Paris&ids=1|2&metadata[order]=42&name=Ada%20L&next=/x/y&tags=a&tags=b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discriminated_one_of_body_is_validated_against_the_branch_it_names() {
    let (_server, mcp, log) = start().await;
    let login = json!({"method": "password", "identifier": "u", "password": "p"});
    let seen = sent(&mcp, &log, "createSession", json!({"body": login})).await;
    assert_eq!((seen.method, seen.target.as_str()), (Method::POST, "/api/sessions"));
    // The JSON the runtime writes: keys in sorted order.
    assert_eq!(seen.body, r#"{"identifier":"u","method":"password","password":"p"}"#);
    let seen = sent(&mcp, &log, "createSession", json!({"body": {"method": "code", "code": "1234"}})).await;
    assert_eq!(seen.body, r#"{"code":"1234","method":"code"}"#);
    // The branch `password` names misses a property: refused with its name, nothing sent.
    let before = log.lock().unwrap().len();
    let missing = mcp.tool("createSession", json!({"body": {"method": "password", "identifier": "u"}})).await;
    assert!(refused(&missing).contains("\"password\" is a required property"), "{:?}", missing.messages);
    let unknown = mcp.tool("createSession", json!({"body": {"method": "magic"}})).await;
    assert!(refused(&unknown).contains("magic"), "{:?}", unknown.messages);
    assert_eq!(log.lock().unwrap().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_content_parameter_is_sent_as_one_json_value() {
    let (_server, mcp, log) = start().await;
    let seen = sent(&mcp, &log, "search", json!({"q": {"term": "x"}})).await;
    assert_eq!((seen.method, seen.target.as_str()), (Method::GET, "/api/search?q=%7B%22term%22%3A%22x%22%7D"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_and_path_servers_override_the_root_servers() {
    let (_server, mcp, log) = start().await;
    let get = sent(&mcp, &log, "legacyGet", json!({})).await;
    assert_eq!((get.method, get.target.as_str()), (Method::GET, "/operation-level/legacy"));
    let post = sent(&mcp, &log, "legacyPost", json!({})).await;
    assert_eq!((post.method, post.target.as_str()), (Method::POST, "/path-level/legacy"));
    let root = sent(&mcp, &log, "search", json!({"q": {}})).await;
    assert!(root.target.starts_with("/api/search?"), "{}", root.target);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_part_is_sent_with_its_declared_content_type() {
    let (_server, mcp, log) = start().await;
    let body = json!({"caption": "hi", "photo": "PNG", "thumbnail": "JPG", "raw": "RAW"});
    let seen = sent(&mcp, &log, "uploadPhoto", json!({"body": body})).await;
    let ct = seen.headers[header::CONTENT_TYPE].to_str().unwrap();
    let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap_or_else(|| panic!("{ct}"));
    let part = |name: &str, ct: &str, data: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\nContent-Type: {ct}\r\n\r\n{data}\r\n"
        )
    };
    // photo: the Encoding Object's contentType; thumbnail: its contentMediaType; raw: binary
    // (`format: binary`); caption: plain text (OpenAPI 3.1 § 4.8.15.1, § 4.8.14.3).
    let want = [
        part("caption", "text/plain; charset=utf-8", "hi"),
        part("photo", "image/png", "PNG"),
        part("raw", "application/octet-stream", "RAW"),
        part("thumbnail", "image/jpeg", "JPG"),
        format!("--{boundary}--\r\n"),
    ]
    .concat();
    assert_eq!(String::from_utf8_lossy(&seen.body), want);
}

#[test]
fn check_says_an_undeclared_security_scheme_is_the_documents_fault() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let spec = fixture("request-shapes.yaml");
    let config = |extra: &str| {
        let base = format!(
            "[[adapters]]\nname = \"shapes\"\nkind = \"openapi\"\nspec = \"{}\"\nhttp = {{ base_urls = \
             [\"http://127.0.0.1:9\"] }}\n",
            spec.display()
        );
        std::fs::write(&path, format!("{base}{extra}")).unwrap();
        let out = run(None, &["check", "--config", &path.to_string_lossy()], &[("TOKEN", "t")]);
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    };
    let (passed, report) = config("");
    assert!(passed, "{report}");
    let undeclared = "security scheme 'sessionToken' is not declared in the document's components.securitySchemes";
    assert!(report.contains(&format!("left out GET /me: {undeclared}, so no credential can meet")), "{report}");
    assert!(!report.contains("set credentials.sessionToken"), "{report}");
    // Following the old advice: refused, in the same words, saying what to do instead.
    let (passed, report) = config("credentials = { sessionToken = { secret_env = \"TOKEN\" } }\n");
    assert!(!passed, "{report}");
    assert!(report.contains(&format!("adapters.shapes.credentials.sessionToken: {undeclared}")), "{report}");
    assert!(report.contains("remove this key"), "{report}");
}
