//! Per-caller upstream credentials by RFC 8693 token exchange, against the real issuer
//! (oidc-provider, tests/interop/issuer.mjs) and a REST upstream on loopback that records
//! what it received: the upstream sees a token the issuer minted for it (its `aud`) with the
//! caller's `sub`, never the caller's own token; each caller gets its own token, a caller's
//! later and concurrent calls share one exchange; the OpenAPI adapter does the same for an
//! `oauth2` security scheme, and an `mcp` upstream (`mcp`); a token the upstream revokes
//! before it expires is exchanged again and the call sent once more; a refused exchange and a
//! call without an OAuth token are tool errors that say why and quote no token.

mod mcp;

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use axum::response::IntoResponse as _;
use base64::Engine as _;
use mcp_e2e::issuer::Issuer;
use mcp_e2e::{Answer, FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

/// The runtime's resource: the audience issuer.mjs accepts subject tokens for.
pub(crate) const RESOURCE: &str = "https://mcp.test/mcp";
/// The upstream's name at the issuer: the `aud` of the exchanged tokens.
const UPSTREAM_AUDIENCE: &str = "https://api.test";
/// A static token (no subject token behind it).
const STATIC_TOKEN: &str = "static-token-0123456789";

/// The `Authorization` headers a loopback upstream received, in order.
pub(crate) type Seen = Arc<Mutex<Vec<String>>>;

/// The upstream: answers every request, except on `/revoke-once`, where it revokes the first
/// token it sees there (401 `invalid_token` for it, then and ever after), as an upstream does
/// with a token revoked before it expired.
pub(crate) async fn recorder() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let revoked: Arc<Mutex<Option<String>>> = Arc::default();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap| {
        let log = Arc::clone(&log);
        let revoked = Arc::clone(&revoked);
        async move {
            let auth = headers.get("authorization").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
            log.lock().unwrap().push(auth.clone());
            if uri.path() == "/revoke-once" && *revoked.lock().unwrap().get_or_insert_with(|| auth.clone()) == auth {
                let challenge = r#"Bearer error="invalid_token", error_description="revoked""#;
                return (axum::http::StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)], "").into_response();
            }
            ([("content-type", "application/json")], r#"{"ok":true}"#).into_response()
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
    // One REST adapter with two tools, exchanging with the client secret in `secret_env`.
    let rest = |name: &str, tool: &str, secret_env: &str| {
        format!(
            "[[adapters]]\nname = \"{name}\"\nkind = \"rest\"\nbase_urls = [\"{upstream}\"]\ntoken_exchange = {}\n\
             [[adapters.tools]]\nname = \"{tool}\"\ndescription = \"Who the upstream thinks is calling\"\npath = \"/whoami\"\n\
             [[adapters.tools]]\nname = \"{tool}_revoking\"\ndescription = \"Revokes the first token it sees\"\n\
             path = \"/revoke-once\"\n",
            exchange(secret_env)
        )
    };
    format!(
        r#"{FIXTURES_CONFIG}
{auth}
{good_rest}
{bad_rest}
[[adapters]]
name = "documented"
kind = "openapi"
spec = "{spec}"
credentials.oauth = {{ token_exchange = {good} }}
"#,
        auth = auth(issuer),
        good_rest = rest("api", "whoami", "EXCHANGE_SECRET"),
        // The same upstream with a wrong client secret.
        bad_rest = rest("misconfigured", "whoami_misconfigured", "WRONG_SECRET"),
        good = exchange("EXCHANGE_SECRET"),
    )
}

/// The runtime's `[auth]`: the issuer's tokens for `RESOURCE`, and `STATIC_TOKEN` for "robot".
fn auth(issuer: &Issuer) -> String {
    format!(
        "[auth]\nresource = \"{RESOURCE}\"\nauthorization_servers = [\"{iss}\"]\n[[auth.tokens]]\nsubject = \"robot\"\n\
         secret = \"{STATIC_TOKEN}\"\n[[auth.issuers]]\nissuer = \"{iss}\"\n",
        iss = issuer.url
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
pub(crate) async fn token_for(issuer: &Issuer, sub: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": issuer.url, "aud": RESOURCE, "sub": sub, "exp": now + 300, "iat": now,
                        "scope": "tools:read"});
    issuer.sign(claims, None, "ES256").await
}

pub(crate) fn claims(authorization: &str) -> Value {
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

/// A cached token the upstream revokes before it expires (401 `invalid_token`) is dropped:
/// the call is sent once more with a freshly exchanged token and succeeds, and later calls
/// keep the fresh one.
#[tokio::test]
async fn a_token_the_upstream_revokes_is_exchanged_again_and_the_call_sent_once_more() {
    let Scene { issuer, seen, server: s, _spec } = Scene::start().await;
    let mcp = s.mcp();
    let dave = token_for(&issuer, "dave").await;
    ok(&call(&mcp, &dave, "whoami").await);
    ok(&call(&mcp, &dave, "whoami_revoking").await);
    ok(&call(&mcp, &dave, "whoami").await);
    let got = seen.lock().unwrap().clone();
    // whoami with the first token; the revoking tool refuses it, then gets a fresh one; the
    // next call keeps the fresh one.
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0], got[1], "the cached token went to the revoking upstream first");
    assert_ne!(got[1], got[2], "a fresh token after the 401");
    assert_eq!(got[2], got[3], "later calls keep the fresh token");
    assert_eq!(claims(&got[2])["sub"], "dave");
    assert_eq!(issuer.stats().await["exchanges"], 2, "one exchange more, for the revoked token");
    // Revoked for good: a second caller's call there is refused once, exchanged again, and
    // answered; only the first token seen was revoked, so this one goes through at once.
    let erin = token_for(&issuer, "erin").await;
    ok(&call(&mcp, &erin, "whoami_revoking").await);
    assert_eq!(issuer.stats().await["exchanges"], 3);
}
