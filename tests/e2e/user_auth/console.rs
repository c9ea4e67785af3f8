//! What an administrator sees of the connections in the console and does with them: the
//! Connections page in a real browser (tests/console/connections.mjs) lists who is connected
//! to which upstream without a token, and Remove makes that caller's next call ask again;
//! `/metrics` counts connections, refusals by reason and removals.

use serde_json::{Value, json};

use super::{connect, world_with};

pub(crate) const ADMIN: &str = "console-admin-token-0123456789";

/// The console on, its administrator a static token beside the identity provider's tokens.
pub(crate) const CONSOLE: &str = r#"
[[auth.tokens]]
subject = "ops"
secret = "console-admin-token-0123456789"

[console]
enabled = true
admin_subjects = ["ops"]
"#;

#[tokio::test]
async fn an_administrator_sees_who_is_connected_and_removes_a_connection() {
    let w = world_with(CONSOLE).await;
    let ada = w.caller("ada").await;
    let bea = w.caller("bea").await;
    for (caller, user) in [(&ada, "ada"), (&bea, "bea")] {
        let (link, retry) = caller.asked("whoami", "partner").await;
        assert_eq!(connect(&link, user).await.status, 200);
        assert_eq!(caller.call("whoami", retry).await.result()["resultType"], "complete");
    }
    // A tampered link is refused and counted by its reason.
    let (link, _) = ada.asked("refresh_me", "partner-short").await;
    assert_eq!(connect(&format!("{link}x"), "ada").await.status, 400);

    let http = reqwest::Client::new();
    let console = format!("{}/console/", w.public);
    let listed: Value =
        http.get(format!("{console}api/connections")).bearer_auth(ADMIN).send().await.unwrap().json().await.unwrap();
    let tokens: Vec<String> = w.seen().iter().map(|a| a.trim_start_matches("Bearer ").to_owned()).collect();
    for t in &tokens {
        assert!(!listed.to_string().contains(t.as_str()), "a token in the console's API: {listed}");
    }
    let callers: Vec<String> = ["ada", "bea"].iter().map(|u| format!("{}#{u}", w.idp.url)).collect();
    assert_eq!(listed["connections"].as_array().map(Vec::len), Some(2), "{listed}");

    let dir = mcp_e2e::paths::interop_dir();
    let out = tokio::process::Command::new(dir.join("bin/node"))
        .arg(mcp_e2e::paths::repo().join("tests/console/connections.mjs"))
        .args([console.as_str(), ADMIN])
        .arg(mcp_e2e::paths::repo().join("target/console-shots"))
        .env("BROWSER_MODULES", dir.join("browser/node_modules"))
        .env("EXPECT", json!({"callers": callers, "upstream": "partner", "remove": callers[0]}).to_string())
        .env("SECRETS", tokens.join("\n"))
        .output()
        .await
        .expect("node runs (bash tests/interop/setup.sh installs it)");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    assert!(
        out.status.success() && report.contains("0 failed"),
        "the Connections page:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The removed caller is asked to connect again; the other is not.
    let line = w.server.log_line("an administrator removed a caller's upstream connection").await;
    assert!(line.contains("admin=\"ops\"") && line.contains("caller=") && line.contains("#ada"), "{line}");
    ada.asked("whoami", "partner").await;
    assert_eq!(bea.call("whoami", json!({})).await.result()["resultType"], "complete");

    let metrics = http.get(format!("{}/metrics", w.public)).send().await.unwrap().text().await.unwrap();
    for series in [
        r#"mcp_user_auth_connected_total{upstream="partner"} 2"#,
        r#"mcp_user_auth_refused_total{reason="link_invalid"} 1"#,
        r#"mcp_user_auth_disconnected_total{upstream="partner",by="admin"} 1"#,
    ] {
        assert!(metrics.contains(series), "{series} in /metrics:\n{}", grep(&metrics, "mcp_user_auth"));
    }
    for t in &tokens {
        assert!(!metrics.contains(t.as_str()), "a token in /metrics");
    }
}

fn grep(text: &str, needle: &str) -> String {
    text.lines().filter(|l| l.contains(needle)).collect::<Vec<_>>().join("\n")
}
