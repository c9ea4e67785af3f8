//! Bearer-token authentication (MCP 2026-07-28, basic/authorization): 401 with a challenge
//! pointing at the protected resource metadata, the caller's identity binding MRTR state and
//! owning tasks.

use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::json;

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef0";

fn config() -> String {
    format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "https://mcp.example.com/mcp"
authorization_servers = ["https://auth.example.com"]
[[auth.tokens]]
subject = "alice"
secret = "{ALICE}"
[[auth.tokens]]
subject = "bob"
secret_env = "BOB_TOKEN"
"#
    )
}

#[tokio::test]
async fn requests_need_a_valid_bearer_token() {
    let s = Server::start_with(&config(), &[("BOB_TOKEN", BOB)]);
    let mcp = s.mcp();
    let body = mcp.body("tools/list", json!({}));
    let none = mcp.send(&body, &[]).await;
    assert_eq!(none.status, 401);
    let challenge = none.headers.get("www-authenticate").unwrap().to_str().unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains("resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""),
        "{challenge}"
    );
    assert!(none.error_message().contains("Authorization: Bearer"));
    let wrong = mcp.send(&body, &[("authorization", Some("Bearer not-a-valid-token-at-all"))]).await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.headers.get("www-authenticate").unwrap().to_str().unwrap().contains("invalid_token"));
    for token in [ALICE, BOB] {
        let ok = mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await;
        assert_eq!(ok.status, 200);
    }
    // The scheme in any case, the token with blanks around it (RFC 6750 §2.1).
    let spaced = mcp.send(&body, &[("authorization", Some(&format!("bEaReR  {ALICE} ")))]).await;
    assert_eq!(spaced.status, 200, "{}", spaced.error_message());
    // Metadata and health stay reachable without a token.
    let http = reqwest::Client::new();
    let base = format!("http://{}", s.addr);
    let prm: serde_json::Value = http
        .get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prm["resource"], "https://mcp.example.com/mcp");
    assert_eq!(prm["authorization_servers"], json!(["https://auth.example.com"]));
    assert_eq!(http.get(format!("{base}/healthz")).send().await.unwrap().status().as_u16(), 200);
}

#[tokio::test]
async fn mrtr_state_and_tasks_belong_to_their_caller() {
    let s = Server::start_with(&config(), &[("BOB_TOKEN", BOB)]);
    let mcp: Mcp = s.mcp();
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    let auth = |h: &str| [("authorization", Some(h.to_owned()))];
    let send = |body: serde_json::Value, who: String| {
        let mcp = mcp.clone();
        async move {
            let h = auth(&who);
            let h: Vec<(&str, Option<&str>)> = h.iter().map(|(n, v)| (*n, v.as_deref())).collect();
            mcp.send(&body, &h).await
        }
    };
    let r1 = send(
        mcp.body("tools/call", json!({"name": "test_input_required_result_request_state", "arguments": {}})),
        alice.clone(),
    )
    .await;
    let state = r1.result()["requestState"].as_str().unwrap().to_owned();
    let retry = json!({"name": "test_input_required_result_request_state", "arguments": {}, "requestState": state,
                       "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
    let stolen = send(mcp.body("tools/call", retry.clone()), bob.clone()).await;
    assert_eq!(stolen.error_code(), Some(-32602));
    assert!(stolen.error_message().contains("different caller"), "{}", stolen.error_message());
    let own = send(mcp.body("tools/call", retry), alice.clone()).await;
    assert!(own.result()["content"][0]["text"].as_str().unwrap().contains("state-ok"));

    let tasks = mcp.with_capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let created =
        send(tasks.body("tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 30}})), alice.clone())
            .await;
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    let peek = send(tasks.body("tasks/get", json!({"taskId": id})), bob.clone()).await;
    assert_eq!(peek.error_code(), Some(-32602), "another caller's task looks unknown");
    let cancel = send(tasks.body("tasks/cancel", json!({"taskId": id})), bob).await;
    assert_eq!(cancel.error_code(), Some(-32602));
    let mine = send(tasks.body("tasks/get", json!({"taskId": id})), alice.clone()).await;
    assert_eq!(mine.result()["status"], "working");
    send(tasks.body("tasks/cancel", json!({"taskId": id})), alice).await;
}

#[tokio::test]
async fn bad_auth_config_is_refused_at_start() {
    let (status, stderr) = Server::start_failing(&config(), &[]);
    assert!(!status.success());
    assert!(stderr.contains("auth.tokens[1].secret_env") && stderr.contains("BOB_TOKEN"), "{stderr}");
}
