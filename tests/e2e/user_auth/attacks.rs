//! Attacks on the connection flow, each refused with a page that says what happened and a log
//! line that says why: a link opened by another signed-in person, the upstream's consent link
//! of a signed-in person forwarded to someone else, a tampered or replayed `state`, a redirect
//! target slipped into `/oauth/start`, a code issued to another client.

use mcp_e2e::browser::Browser;
use serde_json::json;

use super::{connect, world};

fn is_callback(url: &str) -> bool {
    url.contains("/oauth/callback?")
}

#[tokio::test]
async fn a_link_opened_by_another_person_stores_nothing() {
    let w = world().await;
    let cara = w.caller("cara").await;
    let (link, retry) = cara.asked("whoami", "partner").await;
    let page = connect(&link, "eve").await;
    assert_eq!(page.status, 403, "{}", page.text());
    assert!(page.text().contains("This link was made for another person"), "{}", page.text());
    assert!(!page.trail.iter().any(|u| u.starts_with(&w.partner.url)), "eve never reached the partner");
    // The log is read from the replica's stderr by another thread: wait for each line.
    w.server.log_line("caller_mismatch").await;
    w.server.log_line("a connect link was opened by another person; nothing stored").await;
    // Cara is still not connected.
    let again = cara.call("whoami", retry).await;
    assert_eq!(again.result()["resultType"], "input_required", "{}", again.message());
    assert!(w.seen().is_empty());
}

/// Eve signs in with her own link, stops at the partner's consent and sends that link to Ada:
/// Ada's consent comes back to a browser that did not sign in, and nothing is stored (else
/// Eve's calls would run with Ada's partner account).
#[tokio::test]
async fn a_consent_link_forwarded_to_another_browser_stores_nothing() {
    let w = world().await;
    let eve = w.caller("eve").await;
    let (link, _) = eve.asked("whoami", "partner").await;
    let partner_auth = format!("{}/auth?", w.partner.url);
    let at_partner = Browser::new("eve").walk(&link, |u| u.starts_with(&partner_auth)).await;
    let page = Browser::new("ada").open(&at_partner.url).await;
    assert_eq!(page.status, 403, "{}", page.text());
    assert!(page.text().contains("This consent was started in another browser"), "{}", page.text());
    w.server.log_line("browser_mismatch").await;
    let again = eve.call("whoami", json!({})).await;
    assert_eq!(again.result()["resultType"], "input_required", "eve is not connected");
    assert!(w.seen().is_empty());
}

#[tokio::test]
async fn tampered_and_replayed_states_and_redirects_through_start_are_refused() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, _) = ada.asked("whoami", "partner").await;
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();

    // A link that was changed, and a redirect target slipped in beside a good one.
    let bad = http.get(format!("{}/oauth/start?link=v1.x.{}", w.public, "A".repeat(40))).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("This link is not valid"));
    let slipped =
        http.get(format!("{link}&redirect_uri=https://evil.example/&next=https://evil.example/")).send().await.unwrap();
    assert_eq!(slipped.status(), 302);
    let location = slipped.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&format!("{}/", w.idp.url)), "only to the identity provider: {location}");
    assert!(!location.contains("evil.example"), "{location}");

    // The sign-in comes back once; the same answer again is a replay.
    let mut browser = Browser::new("ada");
    let back = browser.walk(&link, is_callback).await;
    let first = http.get(&back.url).send().await.unwrap();
    assert_eq!(first.status(), 302, "the sign-in is accepted once");
    let replay = http.get(&back.url).send().await.unwrap();
    assert_eq!(replay.status(), 400);
    assert!(replay.text().await.unwrap().contains("already used"));

    // A state changed by one character.
    let (link, _) = ada.asked("whoami", "partner").await;
    let back = Browser::new("ada").walk(&link, is_callback).await;
    let tampered = tamper(&back.url);
    let res = http.get(&tampered).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("not valid"));

    for reason in ["link_invalid", "state_replayed", "state_invalid"] {
        w.server.log_line(reason).await;
    }
    assert!(w.seen().is_empty(), "nothing was connected");
}

#[tokio::test]
async fn a_code_issued_to_another_client_is_refused() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, _) = ada.asked("whoami", "partner").await;
    // Ada's walk up to the partner's answer: its state is good, its code is for the runtime.
    let mut browser = Browser::new("ada");
    let signed_in = browser.walk(&link, is_callback).await;
    let from_partner = |u: &str| {
        is_callback(u) && reqwest::Url::parse(u).unwrap().query_pairs().any(|(k, v)| k == "iss" && v == w.partner.url)
    };
    let upstream_leg = browser.walk(&signed_in.url, from_partner).await;
    assert!(upstream_leg.url.contains("code="), "{}", upstream_leg.url);
    // A code the partner issued to its client `app` (PKCE, its own redirect URI).
    let verifier = "v".repeat(64);
    let challenge = base64_sha256(&verifier);
    let authorize = format!(
        "{}/auth?response_type=code&client_id=app&redirect_uri={}&scope=openid&code_challenge={challenge}\
         &code_challenge_method=S256&state=x",
        w.partner.url,
        urlencoded("http://127.0.0.1/callback")
    );
    let other = Browser::new("ada").walk(&authorize, |u| u.starts_with("http://127.0.0.1/callback")).await;
    let foreign_code = query(&other.url, "code");
    let swapped = replace_query(&upstream_leg.url, "code", &foreign_code);
    // In ada's own browser (its cookie binds the leg to it), so only the code is wrong.
    let res = browser.open(&swapped).await;
    assert_eq!(res.status, 400, "{}", res.text());
    let text = res.text();
    assert!(text.contains("did not accept the sign-in") && text.contains("invalid_grant"), "{text}");
    assert!(!text.contains(&foreign_code), "the code is not quoted");
    w.server.log_line("code_refused").await;
    let again = ada.call("whoami", json!({})).await;
    assert_eq!(again.result()["resultType"], "input_required", "still not connected");
}

fn tamper(url: &str) -> String {
    let state = query(url, "state");
    let mut bytes = state.into_bytes();
    let i = bytes.len() - 5;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    replace_query(url, "state", &String::from_utf8(bytes).unwrap())
}

fn query(url: &str, name: &str) -> String {
    let url = reqwest::Url::parse(url).unwrap();
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no {name} in {url}"))
}

fn replace_query(url: &str, name: &str, value: &str) -> String {
    let mut url = reqwest::Url::parse(url).unwrap();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| if k == name { (k.into_owned(), value.to_owned()) } else { (k.into_owned(), v.into_owned()) })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    url.to_string()
}

fn urlencoded(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn base64_sha256(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, s.as_bytes()))
}
