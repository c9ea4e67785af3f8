//! The OpenAPI adapter end to end: the runtime fetches a document over HTTP, and every tool
//! it makes is called through MCP against Prism, a real mock server generated from the same
//! document that validates each request (parameters in every location and style, JSON,
//! form and multipart bodies, the API key); `mcp-runtime check` reports the import; a
//! Swagger 2.0 document is refused at start with a message that says what to do. The request
//! shapes Prism lets through are checked byte for byte at a recording upstream ([`requests`]).

mod requests;

use std::path::PathBuf;
use std::process::Command;

use axum::routing::get;
use mcp_e2e::prism::Prism;
use mcp_e2e::schema::assert_response;
use mcp_e2e::{Answer, Server, paths};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    paths::repo().join("tests/fixtures/openapi").join(name)
}

/// Serves `file` at `http://127.0.0.1:<port>/<name>` (the document "at a URL").
async fn serve_file(file: PathBuf) -> String {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let body = std::fs::read_to_string(&file).unwrap();
    let app = axum::Router::new().route(&format!("/{name}"), get(move || std::future::ready(body.clone())));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/{name}")
}

fn config(spec: &str, upstream: &str) -> String {
    format!(
        r#"
[[adapters]]
name = "pets"
kind = "openapi"
spec = "{spec}"
http = {{ base_urls = ["{upstream}"] }}
credentials = {{ api_key = {{ secret_env = "PET_API_KEY" }} }}
"#
    )
}

const KEY: (&str, &str) = ("PET_API_KEY", "k-123");

fn ok(a: &Answer) -> &Value {
    assert_response("tools/call", a.message());
    assert_ne!(a.result()["isError"], true, "{:?}", a.messages);
    a.result()
}

// Multi-threaded: the document server runs on this runtime while `Server::start` blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_is_called_against_a_prism_mock_of_the_same_document() {
    let spec = fixture("petstore.yaml");
    let prism = Prism::start(&spec);
    let url = serve_file(spec).await;
    let server = Server::start_with(&config(&url, &prism.base), &[KEY]);
    let mcp = server.mcp();

    let list = mcp.call("tools/list", json!({})).await;
    assert_response("tools/list", list.message());
    let tools = list.result()["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // deletePet needs `admin_token`, which has no credential: left out, not listed broken.
    assert_eq!(names, ["login", "listPets", "createPet", "showPetById", "uploadPhoto"]);
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap();
    assert_eq!(by_name("listPets")["annotations"]["readOnlyHint"], true);
    assert_eq!(by_name("createPet")["annotations"]["readOnlyHint"], false);
    assert_eq!(by_name("createPet")["inputSchema"]["$defs"]["NewPet"]["required"], json!(["name", "kind"]));

    // Query (array, explode=false), header and cookie parameters, and the API key: Prism
    // answers 401 without the key and 422 for anything off the document.
    let pets = mcp
        .tool("listPets", json!({"limit": 2, "kind": ["cat", "dog"], "X-Request-Id": "req-1", "session": "s1"}))
        .await;
    assert_eq!(ok(&pets)["structuredContent"], json!([{"id": 1, "name": "Rex", "kind": "dog"}]));
    let created = mcp.tool("createPet", json!({"body": {"name": "Tom", "kind": "cat"}})).await;
    assert_eq!(ok(&created)["structuredContent"]["id"], 8);
    let one = mcp.tool("showPetById", json!({"petId": 7})).await;
    assert_eq!(ok(&one)["structuredContent"]["name"], "Rex");
    let photo = mcp.tool("uploadPhoto", json!({"petId": 7, "body": {"caption": "hi"}})).await;
    assert_eq!(ok(&photo)["structuredContent"], json!({"stored": true}));
    let login = mcp.tool("login", json!({"body": {"user": "u", "password": "p"}})).await;
    assert_eq!(ok(&login)["structuredContent"]["token"], "abc123");

    // The mock does check: the same request without the key, or off the document, fails.
    let client = reqwest::Client::new();
    let bare = client.get(format!("{}/pets?limit=2", prism.base)).header("X-Request-Id", "req-1").send().await;
    assert_eq!(bare.unwrap().status(), 401);
    let off = client
        .get(format!("{}/pets?limit=2&kind=cat&kind=bird", prism.base))
        .header("X-Api-Key", "k")
        .header("X-Request-Id", "nope")
        .header("Cookie", "session=s")
        .send()
        .await;
    assert_eq!(off.unwrap().status(), 422);

    // Arguments off the input schema never reach the upstream.
    let bad = mcp.tool("listPets", json!({"limit": 0, "X-Request-Id": "req-1", "session": "s"})).await;
    assert_eq!(bad.error_code(), Some(-32602), "{:?}", bad.messages);
    assert!(bad.error_message().contains("'limit'"), "{:?}", bad.messages);
}

#[tokio::test]
async fn check_reports_operations_tools_left_out_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let spec = fixture("petstore.yaml");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config(&spec.to_string_lossy(), "http://127.0.0.1:9")).unwrap();
    let out = Command::new(paths::runtime_bin())
        .args(["check", "--config"])
        .arg(&path)
        .env_clear()
        .env(KEY.0, KEY.1)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find(|l| l.starts_with("adapter pets: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.starts_with("adapter pets: operations found: 6, tools made: 5, left out: 1, tools/list: "), "{line}");
    let bytes: usize = line.rsplit("tools/list: ").next().unwrap().trim_end_matches(" bytes").parse().unwrap();
    assert!(bytes > 1000, "{line}");
    assert!(
        stdout.contains("left out DELETE /pets/{petId}: no credential for security scheme 'admin_token' (set credentials.admin_token)"),
        "{stdout}"
    );
}

#[test]
fn a_relative_spec_is_found_beside_its_config_whatever_the_working_directory() {
    // The config and its document in one folder, `check` run from another (issue 30 item 11).
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("petstore.yaml"), dir.path().join("petstore.yaml")).unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config("petstore.yaml", "http://127.0.0.1:9")).unwrap();
    let check = || {
        Command::new(paths::runtime_bin())
            .args(["check", "--offline", "--config"])
            .arg(&path)
            .current_dir(elsewhere.path())
            .env_clear()
            .env(KEY.0, KEY.1)
            .output()
            .unwrap()
    };
    let out = check();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("adapter pets: operations found: 6, tools made: 5"), "{stdout}");
    // A document that is not there is named by the path it was looked for at.
    std::fs::remove_file(dir.path().join("petstore.yaml")).unwrap();
    let out = check();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "{report}");
    let wanted = dir.path().join("petstore.yaml");
    assert!(report.contains(&*wanted.to_string_lossy()), "names {}: {report}", wanted.display());
}

#[tokio::test]
async fn swagger_2_is_refused_at_start_with_what_to_do() {
    let spec = fixture("swagger2.json");
    let (status, stderr) = Server::start_failing(&config(&spec.to_string_lossy(), "http://127.0.0.1:9"), &[KEY]);
    assert!(!status.success());
    assert!(stderr.contains("adapters.pets.spec: this is a Swagger 2.0 document"), "{stderr}");
    assert!(stderr.contains("convert it first"), "{stderr}");
    let missing = Server::start_failing(&config("/no/such/spec.yaml", "http://127.0.0.1:9"), &[KEY]).1;
    assert!(missing.contains("adapters.pets.spec: cannot read '/no/such/spec.yaml'"), "{missing}");
}
