//! Cheap at scale: the caps on open streams (`subscriptions/listen` and 2025-era GET
//! streams) per replica and per authenticated caller, refused with the documented error
//! (which cap, how many are open, which setting to raise), slots coming back when streams
//! close, and HTTP/1.1 streams written outside hyper.

use std::time::Duration;

use mcp_e2e::client::Stream;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef0";

fn capped() -> String {
    let server = "[server]\nmax_listen_streams = 3\nmax_listen_streams_per_caller = 2\n";
    format!(
        r#"{}
[auth]
resource = "https://mcp.example.com/mcp"
authorization_servers = ["https://auth.example.com"]
[[auth.tokens]]
subject = "alice"
secret = "{ALICE}"
[[auth.tokens]]
subject = "bob"
secret = "{BOB}"
"#,
        FIXTURES_CONFIG.replace("[server]\n", server)
    )
}

/// A `subscriptions/listen` stream opened with `token`, and its status.
async fn listen(mcp: &Mcp, url: &str, token: &str) -> Stream {
    let body = mcp.body("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut req = reqwest::Client::new().post(url).bearer_auth(token).json(&body);
    for (n, v) in Mcp::headers_for(&body) {
        req = req.header(n, v);
    }
    Stream::new(req.send().await.expect("POST"), body["id"].clone())
}

/// The refusal of a stream: status, `Retry-After` and the JSON-RPC error.
async fn refusal(res: reqwest::Response) -> (u16, Option<String>, Value) {
    let status = res.status().as_u16();
    let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let body: Value = res.json().await.expect("a JSON error body");
    (status, retry, body["error"].clone())
}

async fn listen_refused(mcp: &Mcp, url: &str, token: &str) -> (u16, Option<String>, Value) {
    let body = mcp.body("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut req = reqwest::Client::new().post(url).bearer_auth(token).json(&body);
    for (n, v) in Mcp::headers_for(&body) {
        req = req.header(n, v);
    }
    refusal(req.send().await.expect("POST")).await
}

#[tokio::test]
async fn stream_caps_refuse_per_caller_and_per_replica_with_the_setting_to_raise() {
    let server = Server::start(&capped());
    let url = format!("http://{}/mcp", server.addr);
    let mcp = server.mcp();

    let mut alice = Vec::new();
    for _ in 0..2 {
        let mut s = listen(&mcp, &url, ALICE).await;
        assert_eq!(s.status, 200);
        s.until("notifications/subscriptions/acknowledged", Duration::from_secs(5)).await.expect("ack");
        alice.push(s);
    }
    // Alice's third: her own cap, 429 with -31029.
    let (status, retry, error) = listen_refused(&mcp, &url, ALICE).await;
    assert_eq!(status, 429, "{error}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert_eq!(error["code"], -31029);
    assert_eq!(
        error["data"],
        json!({"limit": "server.max_listen_streams_per_caller", "open": 2, "max": 2, "retryAfterMs": 1000})
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("2 are open of this caller")
            && message.contains("raise server.max_listen_streams_per_caller (now 2)"),
        "{message}"
    );

    // Bob takes the replica's last slot; then the replica is full, for him and for a 2025-era GET stream.
    let mut bob = listen(&mcp, &url, BOB).await;
    assert_eq!(bob.status, 200);
    bob.until("notifications/subscriptions/acknowledged", Duration::from_secs(5)).await.expect("ack");
    let (status, retry, error) = listen_refused(&mcp, &url, BOB).await;
    assert_eq!(status, 503, "{error}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert_eq!(error["code"], -32603);
    assert_eq!(error["data"], json!({"limit": "server.max_listen_streams", "open": 3, "max": 3, "retryAfterMs": 1000}));
    assert!(error["message"].as_str().unwrap().contains("raise server.max_listen_streams (now 3)"), "{error}");
    let session = legacy_session(&url, BOB).await;
    let get = reqwest::Client::new()
        .get(&url)
        .bearer_auth(BOB)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    let (status, _, error) = refusal(get).await;
    assert_eq!((status, &error["data"]["limit"]), (503, &json!("server.max_listen_streams")), "{error}");

    // Other requests are unaffected by full stream caps.
    let list = mcp.send(&mcp.body("tools/list", json!({})), &[("authorization", Some(&format!("Bearer {BOB}")))]).await;
    assert_eq!(list.status, 200);

    // A closed stream gives its slot back: Bob's GET stream opens once one of Alice's ends.
    drop(alice.pop());
    let mut opened = None;
    for _ in 0..50 {
        let s = get_stream(&url, BOB, &session).await;
        if s.status == 200 {
            opened = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(opened.is_some(), "the slot of a closed stream never came back");
}

/// An HTTP/1.1 listen stream leaves hyper once answered (so hyper's 16 KB of connection
/// buffers are not kept for it): it says so with a chunked, closing head, streams and ends as
/// before, and the client's kept-alive connections go on serving calls.
#[tokio::test]
async fn an_http1_stream_is_written_outside_hyper_and_streams_as_before() {
    let server = Server::start(FIXTURES_CONFIG);
    let mcp = server.mcp();
    let client = reqwest::Client::new();
    let post = |body: &Value| {
        let mut req = client.post(&server.url).header("accept", "application/json, text/event-stream").json(body);
        for (n, v) in Mcp::headers_for(body) {
            req = req.header(n, v);
        }
        req.send()
    };
    // A call first: the stream's request goes on this kept-alive connection.
    let list = post(&mcp.body("tools/list", json!({}))).await.unwrap();
    assert_eq!((list.version(), list.status().as_u16()), (reqwest::Version::HTTP_11, 200));
    assert!(list.headers().get("connection").is_none(), "calls keep the connection alive");
    list.bytes().await.unwrap();

    let listen = mcp.body("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let res = post(&listen).await.unwrap();
    assert_eq!(res.status(), 200);
    let head = res.headers().clone();
    assert_eq!(head["connection"], "close", "{head:?}");
    assert_eq!(head["transfer-encoding"], "chunked", "{head:?}");
    assert_eq!(head["content-type"], "text/event-stream", "{head:?}");
    assert!(head.contains_key("date") && head.contains_key("x-request-id"), "the outer layers' headers too: {head:?}");
    let mut stream = Stream::new(res, listen["id"].clone());
    stream.until("notifications/subscriptions/acknowledged", Duration::from_secs(5)).await.expect("ack");

    // The same client calls on (another connection of its pool) and the change is streamed.
    let changed = post(&mcp.body("tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}})));
    assert_eq!(changed.await.unwrap().status(), 200);
    stream.until("notifications/tools/list_changed", Duration::from_secs(5)).await.expect("list_changed");
    // A refused listen is an ordinary answer on a kept-alive connection.
    let refused = post(&mcp.body("subscriptions/listen", json!({"notifications": {"toolsListChanged": "yes"}})));
    let refused = refused.await.unwrap();
    assert_eq!(refused.headers()["content-type"], "application/json");
    assert!(refused.headers().get("connection").is_none(), "{:?}", refused.headers());
    assert!(refused.text().await.unwrap().contains("must be a boolean"));
}

async fn get_stream(url: &str, token: &str, session: &str) -> Stream {
    let res = reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .timeout(Duration::from_secs(3600))
        .send()
        .await
        .unwrap();
    Stream::new(res, Value::Null)
}

/// A 2025-11-25 `initialize` with `token`: the sealed session id.
async fn legacy_session(url: &str, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1.0"}}});
    let res = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned()
}

/// Three replicas on one redis-server with a cluster-wide limit, hammered at once: leases
/// keep the limit within its documented overshoot (`rate × lease_ms`, docs/scaling.md), and
/// with budget to spare most calls make no Redis round trip.
#[tokio::test]
async fn leased_limits_hold_across_three_replicas_within_the_overshoot() {
    let redis = mcp_e2e::redis::RedisServer::start().await;
    let (rate, burst, lease_ms) = (200u64, 40u64, 100u64);
    let config = format!(
        "{FIXTURES_CONFIG}\n[redis]\nurl = \"{}\"\n[rate_limits]\nlease_ms = {lease_ms}\n\
         [rate_limits.tools.echo]\nglobal = {{ rate = {rate}, per_ms = 1000, burst = {burst} }}\n\
         [rate_limits.tools.add]\nglobal = {{ rate = 1000000, per_ms = 1000, burst = 100000 }}\n",
        redis.url
    );
    let nodes: Vec<Server> = (0..3).map(|_| Server::start(&config)).collect();

    // Over the limit from all three replicas at once, 8 callers each.
    let started = std::time::Instant::now();
    let run_for = Duration::from_secs(2);
    let mut workers = Vec::new();
    for node in &nodes {
        for _ in 0..8 {
            let mcp = node.mcp();
            workers.push(tokio::spawn(async move {
                let (mut ok, mut limited) = (0u64, 0u64);
                while started.elapsed() < run_for {
                    let a = mcp.tool("echo", json!({"text": "x"})).await;
                    match a.status {
                        200 => ok += 1,
                        429 => limited += 1,
                        s => panic!("unexpected status {s}: {:?}", a.messages),
                    }
                }
                (ok, limited)
            }));
        }
    }
    let (mut ok, mut limited) = (0, 0);
    for w in workers {
        let (o, l) = w.await.unwrap();
        ok += o;
        limited += l;
    }
    let secs = started.elapsed().as_secs_f64();
    let limit = burst as f64 + rate as f64 * secs;
    let bound = limit + rate as f64 * lease_ms as f64 / 1000.0;
    assert!(limited > 0, "the load never reached the limit ({ok} calls in {secs:.2} s)");
    assert!(
        (ok as f64) <= bound,
        "{ok} calls in {secs:.2} s: over the limit ({limit:.0}) plus its overshoot ({bound:.0})"
    );
    assert!(
        (ok as f64) >= 0.5 * rate as f64 * secs,
        "only {ok} calls in {secs:.2} s: the limit is far stricter than it says"
    );

    // Budget to spare: calls spend from leases, and Redis sees a fraction of them.
    let before = script_calls(&redis.url).await;
    let mut calls = Vec::new();
    for node in &nodes {
        for _ in 0..4 {
            let mcp = node.mcp();
            calls.push(tokio::spawn(async move {
                for i in 0..100 {
                    assert_eq!(mcp.tool("add", json!({"a": i, "b": 1})).await.status, 200);
                }
            }));
        }
    }
    for c in calls {
        c.await.unwrap();
    }
    let round_trips = script_calls(&redis.url).await - before;
    assert!(round_trips * 4 < 1200, "{round_trips} Redis scripts for 1200 calls: leases are not used");
}

/// Scripts Redis has run (`EVALSHA` and `EVAL` calls, from `INFO commandstats`).
async fn script_calls(url: &str) -> u64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("redis");
    s.write_all(b"INFO commandstats\r\n").await.unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 16384];
    while !complete(&text) {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "redis closed the connection");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
        .filter_map(|l| l.split("calls=").nth(1)?.split(',').next()?.parse::<u64>().ok())
        .sum()
}

/// Whether a RESP bulk string (`$LEN\r\n...\r\n`) has fully arrived.
fn complete(text: &str) -> bool {
    let Some((len, rest)) = text.strip_prefix('$').and_then(|t| t.split_once("\r\n")) else { return false };
    len.parse::<usize>().is_ok_and(|n| rest.len() >= n + 2)
}
