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

#[tokio::test]
async fn an_mcp_upstream_is_called_with_each_callers_own_token_in_either_revision() {
    let port = mcp_e2e::redis::free_ports(1)[0];
    let public = format!("http://127.0.0.1:{port}");
    let callback = format!("{public}/oauth/callback");
    let idp = Issuer::with_web_client(&[&callback]);
    let partner = Issuer::with_web_client(&[&callback]);
    // The upstream trusts the partner's tokens for its API, and the service's static token.
    let upstream = Server::start_with(
        &format!(
            "{}\n[auth]\nresource = \"{PARTNER_API}\"\n[[auth.tokens]]\nsubject = \"catalog\"\nsecret = \"{SERVICE}\"\n\
             [[auth.issuers]]\nissuer = \"{}\"\n",
            mcp_e2e::FIXTURES_CONFIG,
            partner.url
        ),
        &[("RUST_LOG", "info,mcp_runtime::http::legacy=debug")],
    );
    let (rest, _) = recorder().await;
    let leg = |name: &str, protocol: &str| {
        format!(
            "[[adapters]]\nname = \"{name}\"\nkind = \"mcp\"\nurl = \"{url}\"\nprotocol = \"{protocol}\"\nprefix = \"{name}_\"\n\
             allow = [\"echo\"]\nauth = {{ kind = \"bearer\", secret_env = \"SERVICE_TOKEN\" }}\nuser_auth = \"partner\"\n",
            url = upstream.url
        )
    };
    let front_config = format!(
        "{}\n{}\n{}",
        config(&idp, &partner, &rest, &public),
        leg("modern", "2026-07-28"),
        leg("legacy", "2025")
    );
    let mut env = ENV.to_vec();
    env.push(("SERVICE_TOKEN", SERVICE));
    let front = Server::start_on(&front_config, &env, &format!("127.0.0.1:{port}"));

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
