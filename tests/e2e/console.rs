//! The operator console across replicas: with `[redis]`, every replica with the console on
//! publishes a heartbeat and the Overview lists the replicas seen (the browser-level checks
//! are in tests/console/browser.mjs); with the console off there is no route at all.

use std::time::Duration;

use mcp_e2e::redis::RedisServer;
use mcp_e2e::wait::eventually;
use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::Value;

const ADMIN: &str = "console-admin-token-0123456789";

fn config(redis: Option<&str>, console: bool) -> String {
    let mut c = format!("{FIXTURES_CONFIG}\n[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"{ADMIN}\"\n");
    if let Some(url) = redis {
        c.push_str(&format!("\n[redis]\nurl = \"{url}\"\nkey_prefix = \"console-e2e:\"\n"));
    }
    if console {
        c.push_str("\n[console]\nenabled = true\nadmin_subjects = [\"ops\"]\n");
    }
    c
}

async fn overview(s: &Server) -> (u16, Value) {
    let url = format!("http://{}/console/api/overview", s.addr);
    let res = reqwest::Client::new().get(&url).bearer_auth(ADMIN).send().await.expect("GET overview");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn with_redis_the_overview_lists_every_replica_by_its_heartbeat() {
    let redis = RedisServer::start().await;
    let a = Server::start(&config(Some(&redis.url), true));
    let b = Server::start(&config(Some(&redis.url), true));
    let seen = eventually(
        Duration::from_secs(15),
        || "the overview never listed both replicas".to_owned(),
        || async {
            let (status, o) = overview(&a).await;
            assert_eq!(status, 200, "{o}");
            let replicas = o["replicas"].as_array()?.len();
            (replicas == 2).then_some(o)
        },
    )
    .await;
    assert_eq!(seen["redis"]["up"], true, "{seen}");
    let own = seen["replica"].as_str().unwrap();
    let listed: Vec<&Value> = seen["replicas"].as_array().unwrap().iter().collect();
    assert!(listed.iter().any(|r| r["replica"] == own && r["self"] == true), "{seen}");
    let (_, other) = overview(&b).await;
    assert_ne!(other["replica"], seen["replica"], "two replicas, two ids");
}

#[tokio::test]
async fn off_there_is_no_console_route() {
    let s = Server::start(&config(None, false));
    let (status, _) = overview(&s).await;
    assert_eq!(status, 404);
    let page = reqwest::get(format!("http://{}/console/", s.addr)).await.unwrap();
    assert_eq!(page.status().as_u16(), 404);
}
