//! `user_auth` towards an `mcp` upstream: another runtime, behind the partner's authorization
//! server (its tokens for the partner's API), with a static service token for the catalog.
//! The front runtime lists it with the service token; each caller's calls carry the token the
//! partner issued to that caller, in either revision (a 2025-era upstream gets a session per
//! caller).

use mcp_e2e::Server;
use mcp_e2e::issuer::Issuer;
use serde_json::json;

use super::{ENV, PARTNER_API, config, connect};
use crate::token_exchange::{recorder, token_for};

const SERVICE: &str = "catalog-service-token-0123456789";

/// The front runtime, the upstream runtime behind the partner, and the two authorization servers.
struct World {
    front: Server,
    upstream: Server,
    idp: Issuer,
    partner: Issuer,
    front_config: String,
}

/// An upstream runtime that trusts the partner's tokens for its API (and with `service` a
/// static token, which the front then lists with), and a front runtime with two `mcp`
/// adapters on it, `legs` (2026-07-28 and 2025), offering the tools `allow` names.
async fn world(service: bool, legs: (&str, &str), allow: &str) -> World {
    let port = mcp_e2e::redis::free_ports(1)[0];
    let public = format!("http://127.0.0.1:{port}");
    let callback = format!("{public}/oauth/callback");
    let idp = Issuer::with_web_client(&[&callback]);
    let partner = Issuer::with_web_client(&[&callback]);
    let static_token = if service {
        format!("[[auth.tokens]]\nsubject = \"catalog\"\nsecret = \"{SERVICE}\"\n")
    } else {
        String::new()
    };
    let upstream = Server::start_with(
        &format!(
            "{}\n[auth]\nresource = \"{PARTNER_API}\"\n{static_token}[[auth.issuers]]\nissuer = \"{}\"\n",
            mcp_e2e::FIXTURES_CONFIG,
            partner.url
        ),
        &[("RUST_LOG", "info,mcp_runtime::http::legacy=debug")],
    );
    let (rest, _) = recorder().await;
    let auth = if service { "auth = { kind = \"bearer\", secret_env = \"SERVICE_TOKEN\" }\n" } else { "" };
    let leg = |name: &str, protocol: &str| {
        format!(
            "[[adapters]]\nname = \"{name}\"\nkind = \"mcp\"\nurl = \"{url}\"\nprotocol = \"{protocol}\"\nprefix = \"{name}_\"\n\
             allow = [{allow}]\n{auth}user_auth = \"partner\"\n",
            url = upstream.url
        )
    };
    let front_config =
        format!("{}\n{}\n{}", config(&idp, &partner, &rest, &public), leg(legs.0, "2026-07-28"), leg(legs.1, "2025"));
    let mut env = ENV.to_vec();
    env.push(("SERVICE_TOKEN", SERVICE));
    let front = Server::start_on(&front_config, &env, &format!("127.0.0.1:{port}"));
    World { front, upstream, idp, partner, front_config }
}

#[tokio::test]
async fn an_mcp_upstream_is_called_with_each_callers_own_token_in_either_revision() {
    let World { front, upstream, idp, partner, .. } = world(true, ("modern", "legacy"), "\"echo\"").await;

    let mcp = front.mcp().with_capabilities(json!({"elicitation": {"url": {}}}));
    for user in ["gus", "hal"] {
        let caller = super::Caller { mcp: mcp.clone(), token: token_for(&idp, user).await };
        let (link, retry) = caller.asked_with("modern_echo", "partner", json!({"text": format!("{user}-1")})).await;
        assert_eq!(connect(&link, user).await.status, 200);
        let done = caller.call("modern_echo", retry).await;
        assert_eq!(done.text(0), format!("{user}-1"), "{}", done.message());
        // The 2025-era leg uses the same connection: nothing more to ask.
        let legacy = caller.call("legacy_echo", json!({"arguments": {"text": format!("{user}-2")}})).await;
        assert_eq!(legacy.text(0), format!("{user}-2"), "{}", legacy.message());
        let again = caller.call("legacy_echo", json!({"arguments": {"text": format!("{user}-3")}})).await;
        assert_eq!(again.text(0), format!("{user}-3"), "{}", again.message());
    }
    // The upstream saw each call as the person at the partner, never as the service.
    let as_caller = |sub: &str| format!("name=\"echo\" caller=\"{}#{sub}\"", partner.url);
    let echo_by = |sub: &str| upstream.stderr().lines().filter(|l| l.contains(&as_caller(sub))).count();
    mcp_e2e::wait::until(
        std::time::Duration::from_secs(10),
        || format!("not 3 echo calls each by gus and hal in the upstream's log:\n{}", upstream.stderr()),
        || (echo_by("gus"), echo_by("hal")) == (3, 3),
    )
    .await;
    // The 2025-era leg opened one session per caller, kept for their next calls.
    let opened_by = |sub: &str| {
        let caller = format!("caller=\"{}#{sub}\"", partner.url);
        upstream.stderr().lines().filter(|l| l.contains("a 2025-era session opened") && l.contains(&caller)).count()
    };
    assert_eq!((opened_by("gus"), opened_by("hal")), (1, 1), "{}", upstream.stderr());
    assert!(!upstream.stderr().contains("name=\"echo\" caller=\"catalog\""), "a call went as the service");
}

/// An upstream that answers only its signed-in users, with no service credential to list
/// with: the front lists `<prefix>connect` to everyone, and each caller's own tools once they
/// connected, fetched with their token; a caller who has not connected neither sees nor calls
/// them. Both revisions of upstream.
#[tokio::test]
async fn an_upstream_without_a_service_credential_lists_each_caller_their_own_tools() {
    let World { front, upstream, idp, partner, front_config } = world(false, ("crm", "old"), "\"echo\", \"add\"").await;
    let mcp = front.mcp().with_capabilities(json!({"elicitation": {"url": {}}}));
    let gus = super::Caller { mcp: mcp.clone(), token: token_for(&idp, "gus").await };
    let hal = super::Caller { mcp: mcp.clone(), token: token_for(&idp, "hal").await };
    // Before connecting: the connect tools, none of the upstream's own.
    let (names, result) = listed(&gus).await;
    assert!(names.contains(&"crm_connect".to_owned()) && names.contains(&"old_connect".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n == "crm_echo" || n == "old_echo"), "{names:?}");
    assert_eq!(result["cacheScope"], "private", "the list depends on the caller");
    let connect_tool = result["tools"].as_array().unwrap().iter().find(|t| t["name"] == "crm_connect").unwrap();
    let words = connect_tool["description"].as_str().unwrap();
    assert!(words.contains("partner") && words.contains("list the tools again"), "{words}");

    // Connecting: the connect tool asks, the person walks the link, the retry lists their tools.
    let (link, retry) = gus.asked("crm_connect", "partner").await;
    assert_eq!(connect(&link, "gus").await.status, 200);
    let done = gus.call("crm_connect", retry).await;
    let text = done.text(0);
    assert!(text.contains("connected: 2 tools are available to you (crm_add, crm_echo)"), "{text}");

    let (names, _) = listed(&gus).await;
    for tool in ["crm_echo", "crm_add", "old_echo", "old_add", "crm_connect"] {
        assert!(names.contains(&tool.to_owned()), "{tool} not listed to gus: {names:?}");
    }
    for (tool, n) in [("crm_echo", 1), ("old_echo", 2)] {
        let answer = gus.call(tool, json!({"arguments": {"text": format!("gus-{n}")}})).await;
        assert_eq!(answer.text(0), format!("gus-{n}"), "{}", answer.message());
    }
    let by_gus = format!("name=\"echo\" caller=\"{}#gus\"", partner.url);
    mcp_e2e::wait::until(
        std::time::Duration::from_secs(10),
        || format!("not 2 echo calls by gus in the upstream's log:\n{}", upstream.stderr()),
        || upstream.stderr().lines().filter(|l| l.contains(&by_gus)).count() == 2,
    )
    .await;

    // Another caller, not connected, sees and calls none of them.
    let (names, _) = listed(&hal).await;
    assert!(!names.iter().any(|n| n == "crm_echo"), "{names:?}");
    let refused = hal.call("crm_echo", json!({"arguments": {"text": "x"}})).await;
    assert!(refused.message().to_string().contains("Unknown tool: crm_echo"), "{}", refused.message());
    assert!(!upstream.stderr().contains("#hal"), "nothing reached the upstream as hal");
    // The front never asked the upstream without a caller's token.
    assert!(!front.stderr().contains("cannot fetch the upstream's lists"), "{}", front.stderr());

    // Such an adapter needs a prefix: `check` says so at its place, with the fix.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("front.toml");
    std::fs::write(&file, front_config.replace("prefix = \"crm_\"\n", "")).unwrap();
    let out = mcp_e2e::server::run(None, &["--config", file.to_str().unwrap(), "check"], &ENV);
    let report = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("adapters.crm.prefix: is required with user_auth and no auth"), "{report}");
    assert!(report.contains("e.g. prefix = \"crm_\""), "{report}");
}

/// `tools/list` as `c`: the names, and the result.
async fn listed(c: &super::Caller) -> (Vec<String>, serde_json::Value) {
    let body = c.mcp.body("tools/list", json!({}));
    let result = c.mcp.send(&body, &[("authorization", Some(&format!("Bearer {}", c.token)))]).await.result().clone();
    let names = result["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    (names, result)
}
