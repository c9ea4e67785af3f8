//! A person's own connections page (`/oauth/connections`): they sign in at the identity
//! provider (a real walk through its login and consent pages), see each upstream connected or
//! not, and disconnect one; their agent's next call asks again, and the grant is revoked at the
//! upstream's authorization server (RFC 7009). Another person sees only their
//! own; a form without the page's key, or without a sign-in, changes nothing.

use std::cell::Cell;

use mcp_e2e::browser::{Browser, Page};
use serde_json::json;

use super::{connect, world};

/// Signs the browser's person in on `page_url` and returns the page (its Disconnect forms
/// not submitted), with the whole walk as its trail.
async fn signed_in(browser: &mut Browser, page_url: &str) -> Page {
    let visits = Cell::new(0);
    let walked = browser
        .walk(page_url, |u| {
            if u == page_url {
                visits.set(visits.get() + 1);
            }
            visits.get() == 2
        })
        .await;
    Page { trail: walked.trail, ..browser.get(page_url).await }
}

#[tokio::test]
async fn a_person_sees_their_connections_and_disconnects_one() {
    let w = world().await;
    let ada = w.caller("ada").await;
    let (link, retry) = ada.asked("whoami", "partner").await;
    assert_eq!(connect(&link, "ada").await.status, 200);
    assert_eq!(ada.call("whoami", retry).await.result()["resultType"], "complete");

    let url = format!("{}/oauth/connections", w.public);
    let mut browser = Browser::new("ada");
    let page = signed_in(&mut browser, &url).await;
    let text = page.text();
    assert_eq!(page.status, 200, "{text}");
    assert!(text.starts_with("Your connections"), "{text}");
    assert!(text.contains(&format!("Signed in as {}#ada", w.idp.url)), "{text}");
    assert!(text.contains("partner : connected since 20") && text.contains(" UTC Disconnect"), "{text}");
    assert!(text.contains("partner-short : not connected"), "{text}");
    assert!(page.trail.iter().any(|u| u.starts_with(&w.idp.url)), "signed in at the identity provider");

    // The page in a real browser, as the sign-in left it (tests/console/person_page.mjs).
    let ticket = browser.cookie(&url, "mcp_manage").expect("the sign-in's ticket cookie");
    let dir = mcp_e2e::paths::interop_dir();
    let out = tokio::process::Command::new(dir.join("bin/node"))
        .arg(mcp_e2e::paths::repo().join("tests/console/person_page.mjs"))
        .args([url.as_str(), &format!("mcp_manage={ticket}")])
        .arg(mcp_e2e::paths::repo().join("target/console-shots"))
        .arg("connections-own")
        .env("BROWSER_MODULES", dir.join("browser/node_modules"))
        .env("EXPECT", "Your connections\npartner: connected since\npartner-short: not connected")
        .output()
        .await
        .expect("node runs (bash tests/interop/setup.sh installs it)");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    assert!(out.status.success() && report.contains("0 failed"), "{report}\n{}", String::from_utf8_lossy(&out.stderr));

    // Another person signs in and sees only their own (nothing connected).
    let bea = signed_in(&mut Browser::new("bea"), &url).await.text();
    assert!(bea.contains("#bea") && bea.contains("partner : not connected") && !bea.contains("#ada"), "{bea}");

    // A form without this page's key, and one without a sign-in, change nothing.
    let forged = Page {
        status: 200,
        url: url.clone(),
        body: "<form method=\"post\" action=\"/oauth/connections\"><input name=\"form_key\" value=\"forged\">\
               <input name=\"upstream\" value=\"partner\"></form>"
            .into(),
        trail: Vec::new(),
    };
    let refused = browser.submit(&forged, "forged").await;
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(refused.text().contains("did not come from your connections page; nothing changed"), "{}", refused.text());
    let anonymous = Browser::new("eve").submit(&page, "Disconnect partner").await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.text());
    assert!(anonymous.text().contains("Your sign-in on this page has ended; nothing changed"), "{}", anonymous.text());
    assert_eq!(ada.call("whoami", json!({})).await.result()["resultType"], "complete", "still connected");

    // Disconnect.
    let after = browser.submit(&page, "Disconnect partner").await;
    let text = after.text();
    assert_eq!(after.status, 200, "{text}");
    assert!(text.contains("Disconnected your partner account."), "{text}");
    assert!(text.contains("partner : not connected") && !after.body.contains("Disconnect partner"), "{text}");
    ada.asked("whoami", "partner").await;
    w.server.log_line("the caller disconnected an upstream account on their page").await;
    // The grant is revoked at the partner too (RFC 7009), not only forgotten here.
    w.server.log_line("revoked the caller's grant at the upstream (RFC 7009)").await;
    assert_eq!(w.partner.stats().await["revoked"], 1, "the partner revoked one grant");

    let metrics = reqwest::get(format!("{}/metrics", w.public)).await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(r#"mcp_user_auth_disconnected_total{upstream="partner",by="caller"} 1"#),
        "{}",
        metrics.lines().filter(|l| l.contains("mcp_user_auth")).collect::<Vec<_>>().join("\n")
    );
    assert!(metrics.contains(r#"mcp_user_auth_refused_total{reason="form_key_mismatch"} 1"#));
}
