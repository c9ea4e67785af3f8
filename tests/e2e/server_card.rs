//! The server card (SEP-2127, draft) as a registry or a web page reads it: public (no token
//! even when the endpoint needs one), readable cross-origin, cacheable, naming where to
//! connect, the protocol versions served and the capabilities, and no tool, resource or
//! prompt; 404 while `[server_card]` is off.

use mcp_e2e::Server;
use serde_json::Value;

const TOKEN: &str = "card-token-of-ada-0123456789";

fn config(card: &str) -> String {
    format!(
        r#"[server]
name = "acme-tools"
title = "Acme tools"

[auth]
[[auth.tokens]]
subject = "ada"
secret = "{TOKEN}"

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

{card}"#
    )
}

async fn get(url: &str) -> reqwest::Response {
    reqwest::Client::new().get(url).header("origin", "https://registry.example").send().await.unwrap()
}

#[tokio::test]
async fn the_card_is_public_cacheable_and_names_the_remote_but_no_primitive() {
    let server = Server::start(&config(
        "[server_card]\nenabled = true\nname = \"example.acme/tools\"\nurl = \"https://mcp.acme.example/mcp\"\n\
         description = \"Tickets and builds of Acme\"\nwebsite_url = \"https://acme.example/mcp-help\"\n",
    ));
    let base = server.url.trim_end_matches("/mcp").to_owned();
    for path in ["/mcp/server-card", "/.well-known/mcp/server-card"] {
        let res = get(&format!("{base}{path}")).await;
        assert_eq!(res.status(), 200, "{path}: no token needed");
        let header = |n: &str| res.headers().get(n).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert_eq!(header("access-control-allow-origin"), "*", "{path}");
        assert!(header("cache-control").starts_with("public, max-age="), "{path}: {}", header("cache-control"));
        assert_eq!(header("content-type"), "application/json");
        let card: Value = res.json().await.unwrap();
        assert_eq!(card["$schema"], "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json");
        assert_eq!(card["name"], "example.acme/tools");
        assert_eq!(card["title"], "Acme tools");
        assert_eq!(card["description"], "Tickets and builds of Acme");
        assert_eq!(card["websiteUrl"], "https://acme.example/mcp-help");
        let remote = &card["remotes"][0];
        assert_eq!(remote["type"], "streamable-http");
        assert_eq!(remote["url"], "https://mcp.acme.example/mcp");
        let versions: Vec<&str> =
            remote["supportedProtocolVersions"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(versions.contains(&"2026-07-28") && versions.contains(&"2025-11-25"), "{versions:?}");
        assert_eq!(remote["authentication"]["required"], true);
        assert!(card["capabilities"]["tools"].is_object(), "{card}");
        for primitive in ["tools", "resources", "prompts"] {
            assert!(card.get(primitive).is_none(), "no {primitive} in the card: {card}");
        }
    }
}

#[tokio::test]
async fn without_the_switch_there_is_no_card() {
    let server = Server::start(&config(""));
    let res = get(&server.url.replace("/mcp", "/mcp/server-card")).await;
    assert_eq!(res.status(), 404);
    assert!(res.text().await.unwrap().contains("[server_card] is off"));
}
