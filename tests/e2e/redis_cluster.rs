//! Three replicas sharing one real Redis: a reload on one reaches a listen stream on another,
//! rate-limit budgets and cached results are shared, a task created on one is read and
//! cancelled on others, and a Redis outage degrades to local state without a single 5xx —
//! fan-out working again once Redis is back.

use std::time::{Duration, Instant};

use mcp_e2e::client::Stream;
use mcp_e2e::redis::RedisServer;
use mcp_e2e::wait::eventually;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const KEY: &str = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=";

fn config(redis_url: &str, extra: &str) -> String {
    format!(
        "{FIXTURES_CONFIG}\n[redis]\nurl = \"{redis_url}\"\ntimeout_ms = 200\nbreaker_open_ms = 500\n\
         [[request_state.keys]]\nid = \"k1\"\nsecret = \"{KEY}\"\n{extra}"
    )
}

fn three(redis: &RedisServer, extra: &str) -> Vec<Server> {
    // Info-level logs: the tests read the Redis state changes from them.
    (0..3).map(|_| Server::start_with(&config(&redis.url, extra), &[("RUST_LOG", "info")])).collect()
}

/// The next notification with `method` on `stream`, within `within`.
async fn expect(stream: &mut Stream, method: &str, within: Duration) -> Option<Value> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        match stream.next(end - Instant::now()).await {
            Some(m) if m["method"] == method => return Some(m),
            Some(_) => {}
            None => return None,
        }
    }
    None
}

/// The replica's Prometheus text.
pub(crate) async fn metrics(node: &Server) -> String {
    reqwest::get(format!("http://{}/metrics", node.addr)).await.unwrap().text().await.unwrap()
}

/// Drains whatever arrives within `quiet`.
async fn drain(stream: &mut Stream, quiet: Duration) {
    while stream.next(quiet).await.is_some() {}
}

/// Opens a listen stream on `on` for updates of `uri` and waits until a touch on `from`
/// arrives through Redis (the replicas' subscriptions connect in the background).
pub(crate) async fn watch_through_redis(on: &Mcp, from: &Mcp, uri: &str) -> Stream {
    let mut stream =
        on.open_stream("subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [uri]}})).await;
    assert_eq!(
        stream.next(Duration::from_secs(5)).await.unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert!(fan_out_reaches(&mut stream, from, uri, Duration::from_secs(15)).await, "fan-out never connected");
    stream
}

/// Touches `uri` on `from` until `stream` sees the update (or `within` passes).
pub(crate) async fn fan_out_reaches(stream: &mut Stream, from: &Mcp, uri: &str, within: Duration) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        from.tool("touch_resource", json!({"uri": uri})).await;
        if expect(stream, "notifications/resources/updated", Duration::from_millis(400)).await.is_some() {
            drain(stream, Duration::from_millis(300)).await;
            return true;
        }
    }
    false
}

#[tokio::test]
async fn a_reload_on_one_replica_reaches_listeners_on_another() {
    let redis = RedisServer::start().await;
    let nodes = three(&redis, "");
    let (a, c) = (&nodes[0], &nodes[2]);
    let mut stream = c
        .mcp()
        .open_stream(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["faults://w"]}}),
        )
        .await;
    stream.next(Duration::from_secs(5)).await.unwrap();
    assert!(fan_out_reaches(&mut stream, &a.mcp(), "faults://w", Duration::from_secs(15)).await);
    // A drops an adapter and reloads (SIGHUP): C's listener hears that the tools changed.
    let without_demo = std::fs::read_to_string(&a.config_path)
        .unwrap()
        .replace("[[adapters]]\nname = \"demo\"\nkind = \"fixtures\"\nset = \"demo\"\n", "");
    std::fs::write(&a.config_path, without_demo).unwrap();
    a.signal("HUP");
    let changed = expect(&mut stream, "notifications/tools/list_changed", Duration::from_secs(10)).await;
    assert!(changed.is_some(), "no tools/list_changed on C after reloading A; A logged:\n{}", a.stderr());
    let names: Vec<String> = a.mcp().call("tools/list", json!({})).await.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!names.contains(&"echo".to_owned()), "A serves the new registry");
    assert_eq!(c.mcp().tool("echo", json!({"text": "C unchanged"})).await.status, 200);
}

#[tokio::test]
async fn a_bad_reload_keeps_the_old_config_serving() {
    let redis = RedisServer::start().await;
    let a = Server::start(&config(&redis.url, ""));
    std::fs::write(&a.config_path, "[server]\npage_size = 0\n").unwrap();
    a.signal("HUP");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(a.stderr().contains("server.page_size"), "the reason is logged:\n{}", a.stderr());
    assert_eq!(a.mcp().tool("echo", json!({"text": "still"})).await.result()["content"][0]["text"], "still");
}

#[tokio::test]
async fn rate_limit_budgets_are_shared() {
    let redis = RedisServer::start().await;
    let nodes = three(&redis, "[rate_limits.tools.echo]\nper_caller = { rate = 1, per_ms = 60000, burst = 5 }\n");
    for (i, node) in [0, 0, 1, 1, 2].into_iter().enumerate() {
        let a = nodes[node].mcp().tool("echo", json!({"text": format!("call {i}")})).await;
        assert_eq!(a.status, 200, "call {i} within the budget");
    }
    for node in &nodes {
        let a = node.mcp().tool("echo", json!({"text": "one too many"})).await;
        assert_eq!((a.status, a.error_code()), (429, Some(-31029)), "{:?}", a.messages);
        let retry: u64 = a.headers.get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry));
        assert_eq!(a.message()["error"]["data"]["limit"], "per_caller");
    }
    // Other tools have their own budget.
    assert_eq!(nodes[0].mcp().tool("add", json!({"a": 1, "b": 2})).await.status, 200);
    assert!(metrics(&nodes[0]).await.contains("mcp_rate_limited_total{scope=\"per_caller\"} 1"));
}

#[tokio::test]
async fn cached_results_are_shared() {
    let redis = RedisServer::start().await;
    let nodes = three(&redis, "[caching]\nresources_read = { ttl_ms = 60000, scope = \"public\" }\n");
    let read = |node: &Server, uri: &str| {
        let mcp = node.mcp();
        let uri = uri.to_owned();
        async move { mcp.call("resources/read", json!({"uri": uri})).await.result()["contents"][0]["text"].clone() }
    };
    // B's adapter has served one read already; A's serves the first read of /x.
    assert_eq!(read(&nodes[1], "faults://counter/warm").await, "1");
    assert_eq!(read(&nodes[0], "faults://counter/x").await, "1");
    // B answers /x from the shared cache: its own adapter would say 2.
    assert_eq!(read(&nodes[1], "faults://counter/x").await, "1");
    assert_eq!(read(&nodes[1], "faults://counter/y").await, "2");
    assert!(metrics(&nodes[1]).await.contains("mcp_cache_requests_total{cache=\"l2\",result=\"hit\"} 1"));
}

#[tokio::test]
async fn tasks_are_visible_from_every_replica() {
    let redis = RedisServer::start().await;
    let nodes = three(&redis, "");
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let [a, b, c] = [0, 1, 2].map(|i| nodes[i].mcp().with_capabilities(caps.clone()));
    let created = a.tool("slow_compute", json!({"seconds": 0.3, "label": "shared"})).await;
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    let status = eventually(
        Duration::from_secs(5),
        || format!("task {id} did not complete on another replica"),
        || async {
            let status = b.call("tasks/get", json!({"taskId": id})).await.result().clone();
            (status["status"] == "completed").then_some(status)
        },
    )
    .await;
    assert_eq!(status["result"]["content"][0]["text"], "Computed 'shared' in 0.3 s");
    // Cancelled on C; the job on A stops and A sees it cancelled.
    let long = a.tool("slow_compute", json!({"seconds": 60})).await;
    let id = long.result()["taskId"].as_str().unwrap().to_owned();
    assert!(c.call("tasks/cancel", json!({"taskId": id})).await.error_code().is_none());
    assert_eq!(a.call("tasks/get", json!({"taskId": id})).await.result()["status"], "cancelled");
}

#[tokio::test]
async fn a_redis_outage_degrades_to_local_state_and_fan_out_comes_back() {
    let mut redis = RedisServer::start().await;
    let nodes = three(&redis, "[rate_limits.tools.add]\nper_caller = { rate = 100, per_ms = 1000 }\n");
    let (a, c) = (nodes[0].mcp(), nodes[2].mcp());
    let mut stream = watch_through_redis(&c, &a, "faults://outage").await;

    redis.stop().await;
    let started = Instant::now();
    for round in 0..5 {
        for node in &nodes {
            let mcp = node.mcp();
            for a in [
                mcp.tool("echo", json!({"text": format!("round {round}")})).await,
                mcp.tool("add", json!({"a": round, "b": 1})).await,
                mcp.call("tools/list", json!({})).await,
                mcp.call("resources/read", json!({"uri": "faults://counter/z"})).await,
            ] {
                assert!(a.status < 500, "a 5xx during the outage: {:?}", a.messages);
                assert!(a.error_code().is_none(), "an error during the outage: {:?}", a.messages);
            }
        }
    }
    let took = started.elapsed();
    eprintln!("60 calls during the outage took {took:?}");
    assert!(took < Duration::from_secs(20), "the breaker keeps calls from waiting on Redis: {took:?}");
    let ready = reqwest::get(format!("http://{}/readyz", nodes[0].addr)).await.unwrap();
    assert_eq!(ready.status().as_u16(), 200, "readiness stays green: Redis is not required");
    assert!(nodes[0].stderr().matches("redis unavailable").count() <= 1, "logged once per state change");

    redis.restart().await;
    assert!(
        fan_out_reaches(&mut stream, &a, "faults://outage", Duration::from_secs(20)).await,
        "fan-out did not resume after Redis came back"
    );
    assert!(nodes[0].stderr().contains("redis is reachable again"));
}

#[tokio::test]
async fn required_redis_gates_readiness() {
    let mut redis = RedisServer::start().await;
    let node = Server::start(&config(&redis.url, "").replace("timeout_ms = 200", "timeout_ms = 200\nrequired = true"));
    let ready = || async { reqwest::get(format!("http://{}/readyz", node.addr)).await.unwrap().status().as_u16() };
    node.mcp().tool("echo", json!({"text": "x"})).await;
    assert_eq!(ready().await, 200);
    redis.stop().await;
    let still_ready = || "a required Redis that is down makes the replica unready".to_owned();
    eventually(Duration::from_secs(4), still_ready, || async {
        node.mcp().call("resources/read", json!({"uri": "faults://counter/r"})).await;
        (ready().await == 503).then_some(())
    })
    .await;
}
