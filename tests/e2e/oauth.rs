//! The runtime as an OAuth 2.1 resource server (MCP 2026-07-28 basic/authorization) against a
//! real authorization server, oidc-provider on loopback (tests/interop/issuer.mjs): its JWT
//! access tokens call tools, every attack of the list is refused with 401 and a log line while
//! the server keeps serving, unknown-`kid` floods reach the issuer at the configured rate,
//! keys rotate while the runtime runs, access rules answer 403 `insufficient_scope`, and the
//! TypeScript SDK gets its tokens by client credentials and by authorization code + PKCE.

use std::time::Duration;

use base64::Engine as _;
use mcp_e2e::issuer::Issuer;
use mcp_e2e::{Answer, FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

/// The resource indicator of the runtime under test (RFC 8707): what its tokens' `aud` names.
const RESOURCE: &str = "https://mcp.test/mcp";

fn config(issuer: &Issuer, extra: &str) -> String {
    format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "{RESOURCE}"
authorization_servers = ["{iss}"]
scopes_supported = ["tools:read", "tools:admin"]
[[auth.issuers]]
issuer = "{iss}"
{extra}
[auth.tools.add]
scopes = ["tools:admin"]
"#,
        iss = issuer.url
    )
}

async fn call(mcp: &Mcp, token: &str, tool: &str, arguments: Value) -> Answer {
    let body = mcp.body("tools/call", json!({"name": tool, "arguments": arguments}));
    mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await
}

async fn echo(mcp: &Mcp, token: &str) -> Answer {
    call(mcp, token, "echo", json!({"text": "hi"})).await
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[tokio::test]
async fn issuer_tokens_call_tools_and_every_attack_gets_401() {
    let issuer = Issuer::start();
    let s = Server::start(&config(&issuer, ""));
    let mcp = s.mcp();
    let good = issuer.client_credentials(RESOURCE, "tools:read").await;
    let ok = echo(&mcp, &good).await;
    assert_eq!(ok.status, 200, "{:?}", ok.message());
    assert_eq!(ok.text(0), "hi");

    let claims = |patch: Value| {
        let mut c = json!({"iss": issuer.url, "aud": RESOURCE, "sub": "mallory", "exp": now() + 300,
                           "iat": now(), "scope": "tools:read tools:admin"});
        for (k, v) in patch.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    let mut payload: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    payload["scope"] = json!("tools:read tools:admin");
    let evil_jwks = format!("{}/test/evil-jwks", issuer.url);
    let attacks: Vec<(&str, String, &str)> = vec![
        ("alg none", format!("{}.{}.", b64(br#"{"alg":"none","typ":"at+jwt"}"#), parts[1]), "malformed"),
        (
            "HS256 keyed with the RSA public key",
            issuer.sign_with(json!({"claims": claims(json!({})), "alg": "HS256"})).await,
            "wrong_algorithm",
        ),
        (
            "tampered payload",
            format!("{}.{}.{}", parts[0], b64(payload.to_string().as_bytes()), parts[2]),
            "bad_signature",
        ),
        ("stripped signature", format!("{}.{}.", parts[0], parts[1]), "bad_signature"),
        ("expired", issuer.sign(claims(json!({"exp": now() - 600})), None, "ES256").await, "expired"),
        ("not yet valid", issuer.sign(claims(json!({"nbf": now() + 600})), None, "RS256").await, "not_yet_valid"),
        (
            "wrong issuer",
            issuer.sign(claims(json!({"iss": "https://evil.test"})), None, "ES256").await,
            "untrusted_issuer",
        ),
        ("wrong audience", issuer.client_credentials("https://other.test/mcp", "tools:read").await, "wrong_audience"),
        (
            "jku pointing elsewhere",
            issuer.sign_with(json!({"claims": claims(json!({})), "foreign": true, "header": {"jku": evil_jwks}})).await,
            "bad_signature",
        ),
        (
            "x5u pointing elsewhere, own kid",
            issuer
                .sign_with(json!({"claims": claims(json!({})), "foreign": true, "kid": "attacker",
                                  "header": {"x5u": evil_jwks}}))
                .await,
            "unknown_key",
        ),
        ("64 KB token", "a".repeat(64 * 1024), "too_long"),
        ("broken base64", format!("{}.*not*base64*.{}", parts[0], parts[2]), "malformed"),
    ];
    for (what, token, reason) in &attacks {
        let res = echo(&mcp, token).await;
        assert_eq!(res.status, 401, "{what}: {:?}", res.message());
        let challenge = res.headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("error=\"invalid_token\""), "{what}: {challenge}");
        // The log line names the reason (the text log colours the field name, so match the value).
        s.log_line(&format!("\"{reason}\"")).await;
        assert_eq!(echo(&mcp, &good).await.status, 200, "still serving after {what}");
    }
    // A token in the query string is refused even when valid (MCP: Authorization header only).
    let http = reqwest::Client::new();
    let body = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    let mut req = http.post(format!("{}?access_token={good}", s.url)).json(&body);
    for (k, v) in Mcp::headers_for(&body) {
        req = req.header(k, v);
    }
    let res = req.header("authorization", format!("Bearer {good}")).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 401);
    s.log_line("\"in_query\"").await;
    assert_eq!(issuer.stats().await["evil"], 0, "a forged jku/x5u was followed");
}

#[tokio::test]
async fn unknown_kid_floods_reach_the_issuer_at_the_configured_rate() {
    let issuer = Issuer::start();
    let s = Server::start(&config(&issuer, "jwks_min_interval_ms = 60000"));
    let mcp = s.mcp();
    let good = issuer.client_credentials(RESOURCE, "tools:read").await;
    assert_eq!(echo(&mcp, &good).await.status, 200);
    let before = issuer.jwks_fetches().await;
    let claims = json!({"iss": issuer.url, "aud": RESOURCE, "sub": "x", "exp": now() + 300});
    let forged = issuer.sign(claims, Some("kid-0"), "ES256").await;
    let (h, rest) = forged.split_once('.').unwrap();
    let mut header: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(h).unwrap()).unwrap();
    let mut tasks = Vec::new();
    for i in 0..300 {
        header["kid"] = json!(format!("unknown-{i}"));
        let token = format!("{}.{rest}", b64(header.to_string().as_bytes()));
        let mcp = mcp.clone();
        tasks.push(tokio::spawn(async move { echo(&mcp, &token).await.status }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 401);
    }
    let during = issuer.jwks_fetches().await - before;
    println!("unknown-kid flood: 300 requests, {during} key-set fetches at the issuer (min interval 60 s)");
    assert!(during <= 1, "{during} key-set fetches for 300 unknown kids");
    assert_eq!(echo(&mcp, &good).await.status, 200);
}

#[tokio::test]
async fn keys_rotate_while_running_and_known_keys_outlive_an_issuer_outage() {
    let mut issuer = Issuer::start();
    let s = Server::start(&config(&issuer, "jwks_min_interval_ms = 100"));
    let mcp = s.mcp();
    let (first, spare) = (
        issuer.client_credentials(RESOURCE, "tools:read").await,
        issuer
            .sign(json!({"iss": issuer.url, "aud": RESOURCE, "sub": "spare", "exp": now() + 300}), None, "RS256")
            .await,
    );
    assert_eq!(echo(&mcp, &first).await.status, 200);
    // The issuer goes away: a token never seen before still verifies with the cached keys.
    let port = issuer.port;
    drop(issuer);
    assert_eq!(echo(&mcp, &spare).await.status, 200, "cached keys serve while the issuer is down");
    // It comes back with new keys (a rotation): the unknown kid triggers one refresh.
    issuer = Issuer::start_on(port);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let rotated = issuer.client_credentials(RESOURCE, "tools:read").await;
    assert_ne!(rotated.split('.').next(), first.split('.').next(), "new kid");
    assert_eq!(echo(&mcp, &rotated).await.status, 200, "{:?}", echo(&mcp, &rotated).await.message());
}

#[tokio::test]
async fn access_rules_answer_403_naming_the_scopes_then_allow_after_step_up() {
    let issuer = Issuer::start();
    let s = Server::start(&config(&issuer, ""));
    let mcp = s.mcp();
    let reader = issuer.client_credentials(RESOURCE, "tools:read").await;
    let denied = call(&mcp, &reader, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(denied.status, 403);
    let challenge = denied.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"tools:admin\""), "{challenge}");
    assert!(challenge.contains("resource_metadata=\"https://mcp.test/.well-known/oauth-protected-resource/mcp\""));
    s.log_line("access denied").await;
    // The body decides too: a header naming an open tool does not open `add`.
    let body = mcp.body("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}}));
    let lying =
        mcp.send(&body, &[("authorization", Some(&format!("Bearer {reader}"))), ("mcp-name", Some("echo"))]).await;
    assert_ne!(lying.status, 200);
    let admin = issuer.client_credentials(RESOURCE, "tools:read tools:admin").await;
    let ok = call(&mcp, &admin, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(ok.result()["structuredContent"]["sum"], 3.0);
    // Lists show each caller what it may call, and say the answer is theirs alone.
    let list = |token: String| {
        let mcp = mcp.clone();
        async move {
            let body = mcp.body("tools/list", json!({}));
            let res = mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await;
            let names: Vec<String> =
                res.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().into()).collect();
            (names, res.result()["cacheScope"].clone())
        }
    };
    let (reader_sees, scope) = list(reader.clone()).await;
    assert!(reader_sees.contains(&"echo".to_owned()) && !reader_sees.contains(&"add".to_owned()), "{reader_sees:?}");
    assert_eq!(scope, "private");
    let (admin_sees, _) = list(admin.clone()).await;
    assert!(admin_sees.contains(&"add".to_owned()), "{admin_sees:?}");
    // The 401 challenge and the metadata document list the scopes.
    let none = mcp.send(&body, &[]).await;
    assert!(none.headers["www-authenticate"].to_str().unwrap().contains("scope=\"tools:read tools:admin\""));
    let prm: Value = reqwest::get(format!("http://{}/.well-known/oauth-protected-resource/mcp", s.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prm["scopes_supported"], json!(["tools:read", "tools:admin"]));
    assert_eq!(prm["authorization_servers"], json!([issuer.url]));
}

#[tokio::test]
async fn the_2025_era_leg_gets_the_same_challenges() {
    let issuer = Issuer::start();
    let s = Server::start(&config(&issuer, ""));
    let reader = issuer.client_credentials(RESOURCE, "tools:read").await;
    let http = reqwest::Client::new();
    let post = |body: Value, token: Option<&str>, session: Option<&str>| {
        let mut req = http
            .post(&s.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(sid) = session {
            req = req.header("mcp-session-id", sid).header("mcp-protocol-version", "2025-11-25");
        }
        req.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    let anonymous = post(init.clone(), None, None).await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    assert!(anonymous.headers()["www-authenticate"].to_str().unwrap().contains("resource_metadata="));
    let opened = post(init, Some(&reader), None).await.unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                    "params": {"name": name, "arguments": {"a": 1, "b": 2, "text": "x"}}})
    };
    let denied = post(call("add"), Some(&reader), Some(&session)).await.unwrap();
    assert_eq!(denied.status().as_u16(), 403);
    let challenge = denied.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.contains("insufficient_scope") && challenge.contains("scope=\"tools:admin\""), "{challenge}");
    let wrong = issuer.client_credentials("https://other.test/mcp", "tools:read").await;
    assert_eq!(post(call("echo"), Some(&wrong), Some(&session)).await.unwrap().status().as_u16(), 401);
}

/// Runs a TypeScript SDK probe (tests/interop/`script`) against a runtime whose resource is
/// its real URL (which the SDK checks against the metadata), with only `tools:read`
/// advertised and `add` needing `tools:admin`; returns its report after checking it passed.
async fn sdk_probe(script: &str) -> String {
    let issuer = Issuer::start();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "{url}"
authorization_servers = ["{iss}"]
scopes_supported = ["tools:read"]
[[auth.issuers]]
issuer = "{iss}"
[auth.tools.add]
scopes = ["tools:admin"]
"#,
        iss = issuer.url
    );
    let _s = Server::start_on(&config, &[], &format!("127.0.0.1:{port}"));
    let dir = mcp_e2e::paths::interop_dir();
    let out = tokio::process::Command::new(dir.join("bin/node"))
        .arg(mcp_e2e::paths::repo().join("tests/interop").join(script))
        .args([&url, &issuer.url])
        .env("INTEROP_DIR", &dir)
        .output()
        .await
        .expect("node (run bash tests/interop/setup.sh)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The official TypeScript SDK's OAuth support end to end (tests/interop/ts-oauth-probe.mjs):
/// 401 → metadata → token from the real issuer → `tools/call`; 403 → step-up → success; a
/// token for another resource → 401; `tools:admin` comes by step-up.
#[tokio::test]
async fn the_typescript_sdk_finds_its_way_through_401_and_403() {
    let report = sdk_probe("ts-oauth-probe.mjs").await;
    assert!(report.contains("3 passed, 0 failed"), "{report}");
}

/// Authorization code + PKCE with the TypeScript SDK's interactive client
/// (tests/interop/ts-pkce-probe.mjs): the consent is driven over HTTP through the issuer's
/// login and consent pages, the token names this runtime's resource (RFC 8707) and calls a
/// tool; a code with the wrong verifier is refused.
#[tokio::test]
async fn authorization_code_with_pkce_through_the_issuers_consent_calls_a_tool() {
    let report = sdk_probe("ts-pkce-probe.mjs").await;
    assert!(report.contains("2 passed, 0 failed"), "{report}");
}

/// Opaque tokens through RFC 7662 introspection at one issuer while JWTs of another are
/// verified locally: several issuers at once, each token checked by its own.
#[tokio::test]
async fn opaque_tokens_are_introspected_next_to_another_issuers_jwts() {
    let (jwts, opaque) = (Issuer::start(), Issuer::start());
    const OPAQUE: &str = "https://mcp.test/opaque";
    let config = format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "{RESOURCE}"
audiences = ["{OPAQUE}"]
[[auth.issuers]]
issuer = "{a}"
[[auth.introspection]]
endpoint = "{b}/token/introspection"
issuer = "{b}"
client_id = "mcp-runtime"
client_secret = "runtime-secret-0123456789"
"#,
        a = jwts.url,
        b = opaque.url
    );
    let s = Server::start(&config);
    let mcp = s.mcp();
    let jwt = jwts.client_credentials(RESOURCE, "tools:read").await;
    let token = opaque.client_credentials(OPAQUE, "tools:read").await;
    assert_eq!(token.split('.').count(), 1, "an opaque token: {token}");
    assert_eq!(echo(&mcp, &jwt).await.status, 200);
    for _ in 0..2 {
        let res = echo(&mcp, &token).await;
        assert_eq!(res.status, 200, "{:?}", res.message());
    }
    assert_eq!(echo(&mcp, "opaque-but-never-issued-0123456789").await.status, 401);
    s.log_line("\"unknown\"").await;
    let elsewhere = opaque.client_credentials("https://elsewhere.test/opaque", "tools:read").await;
    assert_eq!(echo(&mcp, &elsewhere).await.status, 401);
    s.log_line("\"wrong_audience\"").await;
}
