//! What a caller's own upstream token costs a call (`[user_auth]`): an in-process `tools/call`
//! whose REST adapter sends the caller's stored token (the vault's grant, opened and kept by
//! this replica) against the same call whose adapter sends a static credential (`auth`), the
//! same upstream on loopback, the same caller (a static token), interleaved rounds, best of 5
//! each. Tracing off.
//!
//! Run: `cargo bench -p mcp-runtime --bench user_auth`. Prints each side's time per call and
//! the throughput ratio (acceptance: no more than the static credential, within the noise).

mod support;

use axum::http::HeaderMap;
use mcp_runtime::connect::oauth::Grant;
use mcp_runtime::{AppState, Config};
use serde_json::json;
use support::{Side, compare};

const CALLER: &str = "bench-caller-token-0123456789";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The upstream: answers every path, and says whether a bearer came.
    let app = axum::Router::new().fallback(|headers: HeaderMap| async move {
        let bearer = headers.get("authorization").is_some_and(|v| v.as_bytes().starts_with(b"Bearer "));
        ([("content-type", "application/json")], format!("{{\"bearer\":{bearer}}}"))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let tool =
        |name: &str| format!("[[adapters.tools]]\nname = \"{name}\"\ndescription = \"An item\"\npath = \"/items/1\"\n");
    let toml = format!(
        r#"
[auth]
resource = "https://mcp.bench/mcp"
[[auth.tokens]]
subject = "alice"
secret = "{CALLER}"
[[auth.issuers]]
issuer = "https://idp.bench"
jwks_uri = "http://127.0.0.1:9/jwks"

[user_auth]
public_url = "https://mcp.bench"
[user_auth.sign_in]
issuer = "https://idp.bench"
client_id = "mcp-runtime"

[[upstream_auth]]
name = "partner"
authorization_endpoint = "https://auth.bench/authorize"
token_endpoint = "https://auth.bench/token"
client_id = "mcp-runtime"

[[adapters]]
name = "fixed"
kind = "rest"
base_urls = ["{upstream}"]
auth = {{ kind = "bearer", secret_env = "UPSTREAM_TOKEN" }}
{fixed}
[[adapters]]
name = "mine"
kind = "rest"
base_urls = ["{upstream}"]
user_auth = "partner"
{mine}"#,
        fixed = tool("item_fixed"),
        mine = tool("item_mine"),
    );
    let env = [("UPSTREAM_TOKEN", "static-upstream-token-0123456789")].into_iter().collect();
    let config = Config::from_toml_with_env(&toml, env).expect("the bench config loads");
    let state = AppState::build(&config).await.unwrap();
    let connections = state.connections.clone().expect("[user_auth]");
    let grant = Grant::new("alices-own-upstream-token-0123456789".into(), None, None);
    connections.vault.put("alice", "partner", grant).await.expect("stored");
    // Of that, the lookup alone: the vault's opened grant, as each call takes it.
    let sealer = state.sealer.load_full();
    let alice = mcp_adapter_api::Identity::new("alice");
    let capabilities = json!({});
    let call = mcp_runtime::connect::Call {
        sealer: &sealer,
        identity: Some(&alice),
        upstream: "partner",
        tool: "item_mine",
        capabilities: &capabilities,
    };
    let started = std::time::Instant::now();
    for _ in 0..200_000 {
        std::hint::black_box(connections.credential(std::hint::black_box(&call)).await);
    }
    support::report("the caller's token from the vault (its opened grant)", 200_000, started.elapsed());
    let app = mcp_runtime::app(state);
    compare(
        Side::new("static credential", &app, Some(CALLER)).calling("item_fixed", json!({})),
        Side::new("the caller's stored token", &app, Some(CALLER)).calling("item_mine", json!({})),
        ">= 0.97 (no more than a static credential, within the noise)",
    )
    .await;
}
