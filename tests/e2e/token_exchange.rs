//! Per-caller upstream credentials by RFC 8693 token exchange, against the real issuer
//! (oidc-provider, tests/interop/issuer.mjs) and a REST upstream on loopback that records
//! what it received: the upstream sees a token the issuer minted for it (its `aud`) with the
//! caller's `sub`, never the caller's own token; each caller gets its own token, a caller's
//! later and concurrent calls share one exchange; the OpenAPI adapter does the same for an
//! `oauth2` security scheme; an `mcp` upstream (our own runtime, trusting the issuer for its
//! own audience) is called as the caller, in a session of the caller's own when it speaks
//! 2025-era sessions; a refused exchange and a call without an OAuth token are tool errors
//! that say why and quote no token.

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use base64::Engine as _;
use mcp_e2e::issuer::Issuer;
use mcp_e2e::{Answer, FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

/// The runtime's resource: the audience issuer.mjs accepts subject tokens for.
const RESOURCE: &str = "https://mcp.test/mcp";
/// The upstream's name at the issuer: the `aud` of the exchanged tokens.
const UPSTREAM_AUDIENCE: &str = "https://api.test";
/// A static token (no subject token behind it).
const STATIC_TOKEN: &str = "static-token-0123456789";

/// The `Authorization` headers a loopback upstream received, in order.
type Seen = Arc<Mutex<Vec<String>>>;

async fn recorder() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let log = Arc::clone(&log);
        async move {
            let auth = headers.get("authorization").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
            log.lock().unwrap().push(auth);
            ([("content-type", "application/json")], r#"{"ok":true}"#)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn config(issuer: &Issuer, upstream: &str, spec: &str) -> String {
    let exchange = |secret_env: &str| {
        format!(
            r#"{{ token_endpoint = "{iss}/token", client_id = "mcp-runtime", client_secret_env = "{secret_env}", audience = "{UPSTREAM_AUDIENCE}", scope = "files:write" }}"#,
            iss = issuer.url
        )
    };
    // One REST adapter with one tool, exchanging with the client secret in `secret_env`.
    let rest = |name: &str, tool: &str, secret_env: &str| {
        format!(
            "[[adapters]]\nname = \"{name}\"\nkind = \"rest\"\nbase_urls = [\"{upstream}\"]\ntoken_exchange = {}\n\
             [[adapters.tools]]\nname = \"{tool}\"\ndescription = \"Who the upstream thinks is calling\"\npath = \"/whoami\"\n",
            exchange(secret_env)
        )
    };
    format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "{RESOURCE}"
authorization_servers = ["{iss}"]
[[auth.tokens]]
subject = "robot"
secret = "{STATIC_TOKEN}"
[[auth.issuers]]
issuer = "{iss}"

{good_rest}
{bad_rest}
[[adapters]]
name = "documented"
kind = "openapi"
spec = "{spec}"
credentials.oauth = {{ token_exchange = {good} }}
"#,
        iss = issuer.url,
        good_rest = rest("api", "whoami", "EXCHANGE_SECRET"),
        // The same upstream with a wrong client secret.
        bad_rest = rest("misconfigured", "whoami_misconfigured", "WRONG_SECRET"),
        good = exchange("EXCHANGE_SECRET"),
    )
}

/// An OpenAPI document whose one operation needs an `oauth2` scheme.
fn spec(upstream: &str) -> tempfile::NamedTempFile {
    let doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "files", "version": "1"},
        "servers": [{"url": upstream}],
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": "https://idp.test/token", "scopes": {"files:write": "write files"}}}}}},
        "security": [{"oauth": ["files:write"]}],
        "paths": {"/files": {"get": {"operationId": "list_files", "description": "Lists files",
            "responses": {"200": {"description": "ok"}}}}},
    });
    let file = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(file.path(), doc.to_string()).unwrap();
    file
}

async fn call(mcp: &Mcp, token: &str, tool: &str) -> Answer {
    let body = mcp.body("tools/call", json!({"name": tool, "arguments": {}}));
    mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await
}

/// A caller's access token for the runtime, signed by the issuer.
async fn token_for(issuer: &Issuer, sub: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": issuer.url, "aud": RESOURCE, "sub": sub, "exp": now + 300, "iat": now,
                        "scope": "tools:read"});
    issuer.sign(claims, None, "ES256").await
}

fn claims(authorization: &str) -> Value {
    let token = authorization.strip_prefix("Bearer ").unwrap_or_else(|| panic!("not a bearer: {authorization}"));
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// The issuer, the recording upstream, and the runtime serving it through every adapter.
struct Scene {
    issuer: Issuer,
    seen: Seen,
    server: Server,
    _spec: tempfile::NamedTempFile,
}

impl Scene {
    async fn start() -> Self {
        let issuer = Issuer::start();
        let (upstream, seen) = recorder().await;
        let spec = spec(&upstream);
        let server = Server::start_with(
            &config(&issuer, &upstream, spec.path().to_str().unwrap()),
            &[("EXCHANGE_SECRET", "runtime-secret-0123456789"), ("WRONG_SECRET", "not-the-secret")],
        );
        Self { issuer, seen, server, _spec: spec }
    }
}

fn ok(answer: &Answer) {
    assert_eq!(answer.status, 200, "{:?}", answer.message());
    assert_ne!(answer.result()["isError"], true, "{:?}", answer.message());
}

#[tokio::test]
async fn upstreams_get_exchanged_per_caller_tokens_cached_and_never_the_callers_own() {
    let Scene { issuer, seen, server: s, _spec } = Scene::start().await;
    let mcp = s.mcp();
    let alice = token_for(&issuer, "alice").await;
    let bob = token_for(&issuer, "bob").await;

    ok(&call(&mcp, &alice, "whoami").await);
    ok(&call(&mcp, &alice, "whoami").await);
    ok(&call(&mcp, &bob, "whoami").await);
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 3);
    for (auth, sub) in got.iter().zip(["alice", "alice", "bob"]) {
        assert!(!auth.contains(&alice) && !auth.contains(&bob), "the caller's own token reached the upstream");
        let c = claims(auth);
        assert_eq!((c["aud"].as_str(), c["sub"].as_str()), (Some(UPSTREAM_AUDIENCE), Some(sub)), "{c}");
        assert_eq!(c["act"]["sub"], "mcp-runtime", "the runtime acts for the caller: {c}");
    }
    assert_eq!(got[0], got[1], "alice's second call reuses her exchanged token");
    assert_ne!(got[0], got[2], "bob gets his own token");
    assert_eq!(issuer.stats().await["exchanges"], 2, "one exchange per caller");

    // Concurrent first calls of one caller share one exchange.
    let carol = token_for(&issuer, "carol").await;
    let calls: Vec<_> = (0..8).map(|_| call(&mcp, &carol, "whoami")).collect();
    for answer in futures_util::future::join_all(calls).await {
        ok(&answer);
    }
    assert_eq!(issuer.stats().await["exchanges"], 3, "eight concurrent calls, one exchange");

    // The OpenAPI adapter's oauth2 scheme: its own exchange (another upstream, another cache).
    ok(&call(&mcp, &alice, "list_files").await);
    let last = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(claims(&last)["sub"], "alice");
    assert_ne!(last, got[0], "each upstream configuration has its own cache");
    assert_eq!(issuer.stats().await["exchanges"], 4);
}

#[tokio::test]
async fn refused_exchanges_and_callers_without_a_token_get_tool_errors_that_say_why() {
    let Scene { issuer, seen, server: s, _spec } = Scene::start().await;
    let mcp = s.mcp();
    let alice = token_for(&issuer, "alice").await;

    let refused = call(&mcp, &alice, "whoami_misconfigured").await;
    assert_eq!(refused.status, 200);
    assert_eq!(refused.result()["isError"], true, "{:?}", refused.message());
    let text = refused.text(0);
    assert!(text.contains("invalid_client") && text.contains("client authentication failed"), "{text}");
    assert!(text.contains(&format!("{}/token", issuer.url)), "names the token endpoint: {text}");
    assert!(!text.contains(&alice) && !text.contains("not-the-secret"), "{text}");

    // A static token proves a caller but carries nothing to exchange.
    let robot = call(&mcp, STATIC_TOKEN, "whoami").await;
    assert_eq!(robot.result()["isError"], true, "{:?}", robot.message());
    assert!(robot.text(0).contains("carried none"), "{}", robot.text(0));
    assert!(seen.lock().unwrap().is_empty(), "no request reached the upstream without its credential");

    // Neither failure is cached nor affects others: the good adapter still serves alice.
    ok(&call(&mcp, &alice, "whoami").await);
}

/// An MCP upstream (another runtime) that trusts the issuer's tokens for its own audience
/// (`UPSTREAM_AUDIENCE`) and a static service token for the catalog; the front runtime lists
/// it with the service token and calls it as each caller, once speaking 2026-07-28 and once
/// as a 2025-era client. The upstream's 2025-era sessions are bound to whoever opened them,
/// so a caller's call in the service's session would be refused: each caller gets its own.
#[tokio::test]
async fn an_mcp_upstream_is_called_as_the_caller_in_either_revision() {
    const SERVICE: &str = "catalog-service-token-0123456789";
    let issuer = Issuer::start();
    let upstream = Server::start_with(
        &format!(
            "{FIXTURES_CONFIG}\n[auth]\nresource = \"{UPSTREAM_AUDIENCE}\"\nauthorization_servers = [\"{iss}\"]\n\
             [[auth.tokens]]\nsubject = \"catalog\"\nsecret = \"{SERVICE}\"\n[[auth.issuers]]\nissuer = \"{iss}\"\n",
            iss = issuer.url
        ),
        &[("RUST_LOG", "info")],
    );
    let adapter = |name: &str, protocol: &str| {
        format!(
            "[[adapters]]\nname = \"{name}\"\nkind = \"mcp\"\nurl = \"{url}\"\nprotocol = \"{protocol}\"\nprefix = \"{name}_\"\n\
             allow = [\"echo\"]\nauth = {{ kind = \"bearer\", secret_env = \"SERVICE_TOKEN\" }}\n\
             token_exchange = {{ token_endpoint = \"{iss}/token\", client_id = \"mcp-runtime\", \
             client_secret_env = \"EXCHANGE_SECRET\", audience = \"{UPSTREAM_AUDIENCE}\", scope = \"files:write\" }}\n",
            url = upstream.url,
            iss = issuer.url
        )
    };
    let front = Server::start_with(
        &format!(
            "{FIXTURES_CONFIG}\n[auth]\nresource = \"{RESOURCE}\"\nauthorization_servers = [\"{iss}\"]\n\
             [[auth.tokens]]\nsubject = \"robot\"\nsecret = \"{STATIC_TOKEN}\"\n[[auth.issuers]]\nissuer = \"{iss}\"\n\n{}\n{}",
            adapter("modern", "2026-07-28"),
            adapter("legacy", "2025"),
            iss = issuer.url
        ),
        &[("SERVICE_TOKEN", SERVICE), ("EXCHANGE_SECRET", "runtime-secret-0123456789")],
    );
    let mcp = front.mcp();
    let alice = token_for(&issuer, "alice").await;
    let bob = token_for(&issuer, "bob").await;
    // The catalog came with the service token: both upstream legs are listed.
    let listed =
        mcp.send(&mcp.body("tools/list", json!({})), &[("authorization", Some(&format!("Bearer {alice}")))]).await;
    let names: Vec<&str> =
        listed.result()["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"modern_echo") && names.contains(&"legacy_echo"), "{names:?}");

    for (tool, token, text) in [
        ("modern_echo", &alice, "a1"),
        ("legacy_echo", &alice, "a2"),
        ("legacy_echo", &bob, "b1"),
        ("legacy_echo", &alice, "a3"),
    ] {
        let body = mcp.body("tools/call", json!({"name": tool, "arguments": {"text": text}}));
        let answer = mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await;
        ok(&answer);
        assert_eq!(answer.text(0), text);
    }
    // The upstream saw each call as its caller: the exchanged token (the caller's own, for
    // another audience, would get 401 there) with the caller's subject.
    let as_caller = |sub: &str| format!("name=\"echo\" caller=\"{}#{sub}\"", issuer.url);
    let echo_by = |sub: &str| upstream.stderr().lines().filter(|l| l.contains(&as_caller(sub))).count();
    // Call lines are written off the request path: wait for the last one.
    mcp_e2e::wait::until(
        std::time::Duration::from_secs(10),
        || format!("not 3 echo calls by alice and 1 by bob in the upstream's log:\n{}", upstream.stderr()),
        || (echo_by("alice"), echo_by("bob")) == (3, 1),
    )
    .await;
    assert!(!upstream.stderr().contains("name=\"echo\" caller=\"catalog\""), "a call went as the service");
    // One exchange per caller and upstream configuration: alice for each leg, bob for one.
    assert_eq!(issuer.stats().await["exchanges"], 3);

    // A static token has nothing to exchange: a tool error saying so, nothing sent upstream.
    let body = mcp.body("tools/call", json!({"name": "legacy_echo", "arguments": {"text": "x"}}));
    let refused = mcp.send(&body, &[("authorization", Some(&format!("Bearer {STATIC_TOKEN}")))]).await;
    assert_eq!(refused.result()["isError"], true, "{:?}", refused.message());
    assert!(refused.text(0).contains("carried none"), "{}", refused.text(0));
}
