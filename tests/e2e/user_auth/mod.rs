//! Each caller's own upstream account (`[user_auth]`, `[[upstream_auth]]`), end to end with
//! real parts: the deployment's identity provider and a third party's authorization server
//! are two oidc-provider instances (tests/interop/issuer.mjs), the upstream is a REST API on
//! loopback that records the `Authorization` it receives, and a scripted person
//! (`mcp_e2e::browser`) walks the links in a real HTTP exchange, signing in and consenting on
//! the servers' own pages. A call without a connection answers with a URL-mode elicitation;
//! after the walk, the retried call reaches the upstream with the token the third party
//! issued to that person. The attacks are in [`attacks`].

mod attacks;
mod cluster;
mod console;
mod mcp;
mod own_page;

use mcp_e2e::browser::{Browser, Page};
use mcp_e2e::issuer::Issuer;
use mcp_e2e::{Answer, FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

use crate::token_exchange::{RESOURCE, Seen, claims, recorder, token_for};

/// The upstream API's resource at the third party: the `aud` of the tokens it grants.
pub(crate) const PARTNER_API: &str = "https://api.partner.test";

/// The runtime, the two authorization servers, the upstream and what it saw.
pub(crate) struct World {
    pub server: Server,
    pub idp: Issuer,
    pub partner: Issuer,
    pub seen: Seen,
    pub public: String,
}

/// `[user_auth]` over `idp` (sign-in) and `partner` (upstream `partner`, and `partner-short`,
/// whose tokens are due for a refresh two seconds after they are granted); a REST adapter
/// with tools `whoami` and `revoking` (revokes the first token it sees), another with `refresh_me`.
pub(crate) async fn world() -> World {
    world_with("").await
}

/// [`world`] with `extra` configuration appended.
pub(crate) async fn world_with(extra: &str) -> World {
    let port = mcp_e2e::redis::free_ports(1)[0];
    let public = format!("http://127.0.0.1:{port}");
    let callback = format!("{public}/oauth/callback");
    let idp = Issuer::with_web_client(&[&callback]);
    let partner = Issuer::with_web_client(&[&callback]);
    let (upstream, seen) = recorder().await;
    let config = format!("{}{extra}", config(&idp, &partner, &upstream, &public));
    let server = Server::start_on(&config, &ENV, &format!("127.0.0.1:{port}"));
    World { server, idp, partner, seen, public }
}

/// The client secrets `config` names, and the connections' own log lines (connected,
/// refreshed, refused: INFO).
pub(crate) const ENV: [(&str, &str); 3] = [
    ("SIGN_IN_SECRET", "web-secret-0123456789"),
    ("PARTNER_SECRET", "web-secret-0123456789"),
    ("RUST_LOG", "warn,mcp_runtime::connect=info"),
];

/// The runtime's config (see [`world`]), browsers reaching it at `public`.
pub(crate) fn config(idp: &Issuer, partner: &Issuer, upstream: &str, public: &str) -> String {
    let client = |name: &str, resource: &str| {
        format!(
            "[[upstream_auth]]\nname = \"{name}\"\nissuer = \"{iss}\"\nclient_id = \"web\"\n\
             client_secret_env = \"PARTNER_SECRET\"\nscopes = [\"files:write\"]\nresource = \"{resource}\"\n",
            iss = partner.url
        )
    };
    format!(
        r#"{FIXTURES_CONFIG}
[auth]
resource = "{RESOURCE}"
authorization_servers = ["{idp}"]
[[auth.issuers]]
issuer = "{idp}"

[user_auth]
public_url = "{public}"
[user_auth.sign_in]
issuer = "{idp}"
client_id = "web"
client_secret_env = "SIGN_IN_SECRET"
scopes = ["openid", "tools:read"]

{partner_client}
{short_client}
[[adapters]]
name = "files"
kind = "rest"
base_urls = ["{upstream}"]
user_auth = "partner"
[[adapters.tools]]
name = "whoami"
description = "Who the upstream thinks is calling"
path = "/whoami"
[[adapters.tools]]
name = "revoking"
description = "Revokes the first token it sees"
path = "/revoke-once"

[[adapters]]
name = "short"
kind = "rest"
base_urls = ["{upstream}"]
user_auth = "partner-short"
[[adapters.tools]]
name = "refresh_me"
description = "Who the upstream thinks is calling, with tokens that need refreshing"
path = "/whoami"
"#,
        idp = idp.url,
        partner_client = client("partner", PARTNER_API),
        short_client = client("partner-short", &format!("{PARTNER_API}/short")),
    )
}

impl World {
    /// A client that can open URLs (`elicitation.url`), calling as `user` of the identity provider.
    pub async fn caller(&self, user: &str) -> Caller {
        let token = token_for(&self.idp, user).await;
        let mcp = self.server.mcp().with_capabilities(json!({"elicitation": {"url": {}}}));
        Caller { mcp, token }
    }

    /// The `Authorization` headers the upstream received so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// An MCP client with a caller's token.
pub(crate) struct Caller {
    pub mcp: Mcp,
    pub token: String,
}

impl Caller {
    pub async fn call(&self, tool: &str, extra: Value) -> Answer {
        let mut params = json!({"name": tool, "arguments": {}});
        params.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        let body = self.mcp.body("tools/call", params);
        self.mcp.send(&body, &[("authorization", Some(&format!("Bearer {}", self.token)))]).await
    }

    /// Calls `tool`, expecting the request to connect `upstream`: the link and the retry's params.
    pub async fn asked(&self, tool: &str, upstream: &str) -> (String, Value) {
        self.asked_with(tool, upstream, json!({})).await
    }

    /// [`Self::asked`] with `arguments` (the retry's params carry them too).
    pub async fn asked_with(&self, tool: &str, upstream: &str, arguments: Value) -> (String, Value) {
        let answer = self.call(tool, json!({"arguments": arguments})).await;
        let result = answer.result();
        assert_eq!(result["resultType"], "input_required", "{tool} without a connection: {result}");
        let key = format!("connect-{upstream}");
        let request = &result["inputRequests"][&key];
        assert_eq!(request["method"], "elicitation/create", "{result}");
        assert_eq!(request["params"]["mode"], "url", "{result}");
        let message = request["params"]["message"].as_str().unwrap();
        assert!(message.contains(upstream) && message.contains(tool), "the message names both: {message}");
        let link = request["params"]["url"].as_str().unwrap().to_owned();
        let retry = json!({"arguments": arguments, "inputResponses": {key: {"action": "accept"}},
                           "requestState": result["requestState"]});
        (link, retry)
    }
}

/// Walks `link` as `user`; the page it ends on.
pub(crate) async fn connect(link: &str, user: &str) -> Page {
    Browser::new(user).open(link).await
}

#[tokio::test]
async fn a_caller_connects_an_upstream_by_url_elicitation_and_is_called_as_themselves() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, retry) = ada.asked("whoami", "partner").await;
    assert!(link.starts_with(&format!("{}/oauth/start?link=", w.public)), "{link}");
    assert!(w.seen().is_empty(), "nothing reached the upstream before the caller connected");

    let page = connect(&link, "ada").await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.text().contains("Your partner account is connected"), "{}", page.text());
    assert!(
        page.trail.iter().any(|u| u.starts_with(&w.idp.url)),
        "signed in at the identity provider: {:?}",
        page.trail
    );
    assert!(page.trail.iter().any(|u| u.starts_with(&w.partner.url)), "consented at the partner: {:?}", page.trail);

    let done = ada.call("whoami", retry).await;
    assert_eq!(done.result()["resultType"], "complete", "{}", done.message());
    assert_eq!(done.result()["isError"], json!(null), "{}", done.message());
    let seen = w.seen();
    let token = claims(seen.last().unwrap());
    assert_eq!(token["iss"], w.partner.url.as_str(), "the partner's token: {token}");
    assert_eq!(token["aud"], PARTNER_API, "{token}");
    assert_eq!(token["sub"], "ada", "{token}");

    // Later calls use the stored token at once; another person gets a connection of their own.
    let again = ada.call("whoami", json!({})).await;
    assert_eq!(again.result()["resultType"], "complete", "{}", again.message());
    let bea = w.caller("bea").await;
    let (link, retry) = bea.asked("whoami", "partner").await;
    assert_eq!(connect(&link, "bea").await.status, 200);
    assert_eq!(bea.call("whoami", retry).await.result()["resultType"], "complete");
    let seen = w.seen();
    let (ada_token, bea_token) = (&seen[1], seen.last().unwrap());
    assert_eq!(claims(bea_token)["sub"], "bea");
    assert_ne!(ada_token, bea_token, "two people, two tokens");

    // Nothing secret in the runtime's log: no token the upstream saw, no code.
    w.server.log_line("the caller connected an upstream account").await;
    let log = w.server.stderr();
    for authorization in &seen {
        let token = authorization.trim_start_matches("Bearer ");
        assert!(!log.contains(token), "a token in the log");
    }
    assert!(!log.contains("code="), "an authorization code in the log");
}

#[tokio::test]
async fn a_token_the_upstream_revokes_asks_again_and_a_due_token_is_refreshed() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, retry) = ada.asked("revoking", "partner").await;
    connect(&link, "ada").await;
    // The upstream revokes the first token it sees: the call asks to connect again at once.
    let revoked = ada.call("revoking", retry).await;
    assert_eq!(revoked.result()["resultType"], "input_required", "{}", revoked.message());
    w.server.log_line("the upstream refused the caller's token").await;
    let link = revoked.result()["inputRequests"]["connect-partner"]["params"]["url"].as_str().unwrap().to_owned();
    connect(&link, "ada").await;
    let retry = json!({"inputResponses": {"connect-partner": {"action": "accept"}},
                       "requestState": revoked.result()["requestState"]});
    let ok = ada.call("revoking", retry).await;
    assert_eq!(ok.result()["isError"], json!(null), "{}", ok.message());
    let seen = w.seen();
    assert_ne!(seen[0], seen[1], "a new token after the revocation");

    // Tokens of `partner-short` live 62 s: two seconds after the grant, a call refreshes first.
    let (link, retry) = ada.asked("refresh_me", "partner-short").await;
    connect(&link, "ada").await;
    assert_eq!(ada.call("refresh_me", retry).await.result()["resultType"], "complete");
    let first = w.seen().last().unwrap().clone();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(ada.call("refresh_me", json!({})).await.result()["resultType"], "complete");
    let refreshed = w.seen().last().unwrap().clone();
    assert_ne!(first, refreshed, "a refreshed token");
    assert_eq!(claims(&refreshed)["sub"], "ada");
    w.server.log_line("refreshed the caller's upstream token").await;
}

#[tokio::test]
async fn a_client_that_cannot_open_urls_is_told_where_to_go() {
    let w = world().await;
    let token = token_for(&w.idp, "ada").await;
    let mcp = w.server.mcp();
    let body = mcp.body("tools/call", json!({"name": "whoami", "arguments": {}}));
    let answer = mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await;
    assert_eq!(answer.result()["isError"], true, "{}", answer.message());
    let text = answer.text(0);
    assert!(text.contains("which you have not connected yet"), "{text}");
    let link = text.split_whitespace().find(|w| w.starts_with("http")).unwrap();
    assert!(link.starts_with(&format!("{}/oauth/start?link=", w.public)), "{text}");
    // The link works like the elicitation's.
    assert_eq!(connect(link, "ada").await.status, 200);
    let again = mcp.send(&body, &[("authorization", Some(&format!("Bearer {token}")))]).await;
    assert_eq!(again.result()["isError"], json!(null), "{}", again.message());
}

/// The official TypeScript and Python clients receive the URL elicitation, hand it to their
/// application (a scripted person walks the link) and retry the call, which succeeds
/// (tests/interop/ts-connect-probe.mjs, py-connect-probe.py).
#[tokio::test]
async fn the_official_clients_receive_the_url_elicitation_and_retry_once_connected() {
    let w = world().await;
    let dir = mcp_e2e::paths::interop_dir();
    let url = format!("{}/mcp", w.public);
    for (program, script, user) in [
        (dir.join("bin/node"), "ts-connect-probe.mjs", "dan"),
        (dir.join("py/bin/python"), "py-connect-probe.py", "eli"),
    ] {
        let out = tokio::process::Command::new(&program)
            .arg(mcp_e2e::paths::repo().join("tests/interop").join(script))
            .args([url.as_str(), "whoami", user])
            .env("INTEROP_DIR", &dir)
            .env("PROBE_TOKEN", token_for(&w.idp, user).await)
            .output()
            .await
            .unwrap_or_else(|e| panic!("{} (run bash tests/interop/setup.sh): {e}", program.display()));
        let report = String::from_utf8_lossy(&out.stdout);
        println!("{report}");
        assert!(
            out.status.success() && report.contains(" 0 failed"),
            "{script}:\n{report}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = claims(w.seen().last().unwrap());
        assert_eq!(token["sub"], user, "{script}: the upstream saw {token}");
    }
}

/// A 2025-era client (MCP 2025-11-25, a session) that declared URL elicitation gets
/// `elicitation/create` with `mode: "url"` and an `elicitationId` on the call's stream; once it
/// accepts and the person finishes in the browser, the runtime notices the connection,
/// sends `notifications/elicitation/complete` for that id and finishes the call.
#[tokio::test]
async fn a_2025_era_client_gets_elicitation_create_in_url_mode_and_the_call_finishes() {
    let w = world().await;
    let token = token_for(&w.idp, "fay").await;
    let url = format!("{}/mcp", w.public);
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut req = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .body(body.to_string());
        if let Some(s) = session {
            req = req.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
        }
        req.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"url": {}}}, "clientInfo": {"name": "old", "version": "1"}}});
    let res = post(init, None).await.unwrap();
    let session = res.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    let mut events = mcp_e2e::client::Stream::new(post(call, Some(&session)).await.unwrap(), json!(5));
    let ask = events.until("elicitation/create", std::time::Duration::from_secs(5)).await.expect("elicitation/create");
    let params = &ask["params"];
    assert_eq!(params["mode"], "url", "{ask}");
    let id = params["elicitationId"].as_str().expect("an elicitationId").to_owned();
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}});
    assert_eq!(post(answer, Some(&session)).await.unwrap().status(), 202);
    // The person takes a moment; the call waits on its stream meanwhile.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(connect(params["url"].as_str().unwrap(), "fay").await.status, 200);
    let done = events.until("notifications/elicitation/complete", std::time::Duration::from_secs(10)).await;
    assert_eq!(done.expect("the completion notice")["params"]["elicitationId"], id.as_str());
    let result = events.next(std::time::Duration::from_secs(10)).await.expect("the call's result");
    assert_eq!(result["id"], 5, "{result}");
    assert_eq!(result["result"]["isError"], json!(null), "{result}");
    assert_eq!(claims(w.seen().last().unwrap())["sub"], "fay");
}

/// A caller forgets a connection with their own token (`POST /oauth/disconnect/<upstream>`);
/// the next call asks again. Without a token: 401; an upstream not configured: 404.
#[tokio::test]
async fn a_caller_disconnects_and_is_asked_again() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, retry) = ada.asked("whoami", "partner").await;
    connect(&link, "ada").await;
    assert_eq!(ada.call("whoami", retry).await.result()["resultType"], "complete");
    let http = reqwest::Client::new();
    let disconnect = |upstream: &str, token: Option<&str>| {
        let mut req = http.post(format!("{}/oauth/disconnect/{upstream}", w.public));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.send()
    };
    assert_eq!(disconnect("partner", None).await.unwrap().status(), 401);
    assert_eq!(disconnect("nowhere", Some(&ada.token)).await.unwrap().status(), 404);
    assert_eq!(disconnect("partner", Some(&ada.token)).await.unwrap().status(), 204);
    let again = ada.call("whoami", json!({})).await;
    assert_eq!(again.result()["resultType"], "input_required", "{}", again.message());
    w.server.log_line("the caller disconnected an upstream account").await;
}
