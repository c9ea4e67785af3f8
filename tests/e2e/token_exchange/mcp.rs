//! `token_exchange` towards an `mcp` upstream: another runtime, trusting the issuer for its
//! own audience and a static service token for the catalog. The front runtime lists it with
//! the service token and calls it as each caller, once speaking 2026-07-28 and once as a
//! 2025-era client. The upstream's 2025-era sessions are bound to whoever opened them, so a
//! caller's call in the service's session would be refused: each caller gets its own.

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_e2e::issuer::Issuer;
use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::{Value, json};

use super::{STATIC_TOKEN, UPSTREAM_AUDIENCE, ok, token_for};

/// The service's static token, for the catalog.
const SERVICE: &str = "catalog-service-token-0123456789";

/// The upstream runtime: issuer tokens for its own audience, and the service's token.
fn upstream_config(issuer: &Issuer) -> String {
    format!(
        "{FIXTURES_CONFIG}\n[auth]\nresource = \"{UPSTREAM_AUDIENCE}\"\nauthorization_servers = [\"{iss}\"]\n\
         [[auth.tokens]]\nsubject = \"catalog\"\nsecret = \"{SERVICE}\"\n[[auth.issuers]]\nissuer = \"{iss}\"\n",
        iss = issuer.url
    )
}

/// An `mcp` adapter `name` for the upstream at `url`, speaking `protocol`, exchanging tokens.
fn adapter_config(issuer: &Issuer, name: &str, protocol: &str, url: &str) -> String {
    format!(
        "[[adapters]]\nname = \"{name}\"\nkind = \"mcp\"\nurl = \"{url}\"\nprotocol = \"{protocol}\"\nprefix = \"{name}_\"\n\
         allow = [\"echo\"]\nauth = {{ kind = \"bearer\", secret_env = \"SERVICE_TOKEN\" }}\n\
         token_exchange = {{ token_endpoint = \"{iss}/token\", client_id = \"mcp-runtime\", \
         client_secret_env = \"EXCHANGE_SECRET\", audience = \"{UPSTREAM_AUDIENCE}\", scope = \"files:write\" }}\n",
        iss = issuer.url
    )
}

/// The front runtime with `adapters`, its service token and exchange secret in its environment.
fn front(issuer: &Issuer, adapters: &[String]) -> Server {
    let config = format!("{FIXTURES_CONFIG}\n{}\n{}", super::auth(issuer), adapters.join("\n"));
    Server::start_with(&config, &[("SERVICE_TOKEN", SERVICE), ("EXCHANGE_SECRET", "runtime-secret-0123456789")])
}

#[tokio::test]
async fn an_mcp_upstream_is_called_as_the_caller_in_either_revision() {
    let issuer = Issuer::start();
    let upstream = Server::start_with(&upstream_config(&issuer), &[("RUST_LOG", "info")]);
    let front = front(
        &issuer,
        &[
            adapter_config(&issuer, "modern", "2026-07-28", &upstream.url),
            adapter_config(&issuer, "legacy", "2025", &upstream.url),
        ],
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

/// An upstream that answers only its signed-in users (no service token): with no `auth`, the
/// front lists each caller the upstream's tools as the upstream lists them to that caller,
/// fetched with the caller's exchanged token, in either revision; nothing reaches the upstream
/// without a caller's token.
#[tokio::test]
async fn without_a_service_credential_each_caller_is_listed_their_own_tools() {
    let issuer = Issuer::start();
    let only_callers = format!(
        "{FIXTURES_CONFIG}\n[auth]\nresource = \"{UPSTREAM_AUDIENCE}\"\n[[auth.issuers]]\nissuer = \"{}\"\n",
        issuer.url
    );
    let upstream = Server::start_with(&only_callers, &[("RUST_LOG", "info")]);
    let no_auth = |name: &str, protocol: &str| {
        adapter_config(&issuer, name, protocol, &upstream.url)
            .replace("auth = { kind = \"bearer\", secret_env = \"SERVICE_TOKEN\" }\n", "")
    };
    let front = front(&issuer, &[no_auth("modern", "2026-07-28"), no_auth("legacy", "2025")]);
    let mcp = front.mcp();
    for (user, text) in [("alice", "a"), ("bob", "b")] {
        let token = token_for(&issuer, user).await;
        let auth = format!("Bearer {token}");
        let listed = mcp.send(&mcp.body("tools/list", json!({})), &[("authorization", Some(&auth))]).await;
        assert_eq!(listed.result()["cacheScope"], "private", "{:?}", listed.message());
        let names: Vec<&str> =
            listed.result()["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
        assert!(names.contains(&"modern_echo") && names.contains(&"legacy_echo"), "{user}: {names:?}");
        assert!(!names.iter().any(|n| n.ends_with("connect")), "no connect tool with token exchange: {names:?}");
        for tool in ["modern_echo", "legacy_echo"] {
            let body = mcp.body("tools/call", json!({"name": tool, "arguments": {"text": text}}));
            let answer = mcp.send(&body, &[("authorization", Some(&auth))]).await;
            ok(&answer);
            assert_eq!(answer.text(0), text);
        }
    }
    // Without a caller's token (the static one has nothing to exchange), none of them.
    let anonymous = mcp
        .send(&mcp.body("tools/list", json!({})), &[("authorization", Some(&format!("Bearer {STATIC_TOKEN}")))])
        .await;
    assert!(!anonymous.result().to_string().contains("modern_echo"), "{:?}", anonymous.message());
    let log = upstream.stderr();
    assert!(!log.contains("bearer token refused"), "a request reached the upstream without a token:\n{log}");
}

/// A gateway in front of an MCP upstream that revokes the first token of `sub` it sees (401
/// `invalid_token` for it, then and ever after), as an upstream does with a token revoked
/// before it expired; everything else passes through, streams included.
async fn revoking_gateway(upstream: &str, sub: &'static str) -> String {
    let client = reqwest::Client::new();
    let target = upstream.to_owned();
    let revoked: Arc<Mutex<Option<String>>> = Arc::default();
    let app = axum::Router::new().fallback(move |method: Method, headers: HeaderMap, body: Bytes| {
        let (client, target, revoked) = (client.clone(), target.clone(), Arc::clone(&revoked));
        async move {
            let auth = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            if subject(&auth).as_deref() == Some(sub)
                && *revoked.lock().unwrap().get_or_insert_with(|| auth.clone()) == auth
            {
                let challenge = r#"Bearer error="invalid_token", error_description="revoked""#;
                return Response::builder()
                    .status(401)
                    .header("www-authenticate", challenge)
                    .body(Body::empty())
                    .unwrap();
            }
            let mut request = client.request(method, &target).body(body);
            for (name, value) in headers.iter().filter(|(n, _)| *n != HOST && *n != CONTENT_LENGTH) {
                request = request.header(name, value);
            }
            let answer = request.send().await.expect("the upstream answers");
            let mut response = Response::builder().status(answer.status());
            for (name, value) in
                answer.headers().iter().filter(|(n, _)| *n != CONTENT_LENGTH && *n != TRANSFER_ENCODING)
            {
                response = response.header(name, value);
            }
            response.body(Body::from_stream(answer.bytes_stream())).unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// The `sub` of a bearer JWT; `None` for anything else (the service's static token).
fn subject(authorization: &str) -> Option<String> {
    let payload = authorization.strip_prefix("Bearer ")?.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims["sub"].as_str().map(str::to_owned)
}

/// A 2025-era upstream that revokes a caller's token before it expires: the caller's session
/// cannot be opened with it (401), so the token is dropped, exchanged again, and the session
/// opened and the call sent with the fresh one; the next call keeps both.
// Multi-threaded: the gateway answers while the front runtime starts (its catalog comes
// through the gateway) and the test waits for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_mcp_upstream_revokes_is_exchanged_again_and_the_session_opened_with_the_fresh_one() {
    let issuer = Issuer::start();
    let upstream = Server::start_with(&upstream_config(&issuer), &[("RUST_LOG", "info")]);
    let gateway = revoking_gateway(&upstream.url, "dave").await;
    let front = front(&issuer, &[adapter_config(&issuer, "guarded", "2025", &gateway)]);
    let mcp = front.mcp();
    let dave = token_for(&issuer, "dave").await;
    for text in ["first", "second"] {
        let body = mcp.body("tools/call", json!({"name": "guarded_echo", "arguments": {"text": text}}));
        let answer = mcp.send(&body, &[("authorization", Some(&format!("Bearer {dave}")))]).await;
        ok(&answer);
        assert_eq!(answer.text(0), text);
    }
    assert_eq!(issuer.stats().await["exchanges"], 2, "the revoked token and its replacement");
    let by_dave = format!("name=\"echo\" caller=\"{}#dave\"", issuer.url);
    mcp_e2e::wait::until(
        std::time::Duration::from_secs(10),
        || format!("not two echo calls by dave in the upstream's log:\n{}", upstream.stderr()),
        || upstream.stderr().lines().filter(|l| l.contains(&by_dave)).count() == 2,
    )
    .await;
}
