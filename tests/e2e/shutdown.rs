//! Graceful shutdown of the real binary on SIGTERM: it stops accepting, in-flight calls
//! finish, listen streams end with their final response, and the process exits 0 within
//! `server.shutdown_grace_ms`; a call longer than that is cut at the deadline; a connection
//! that never sent a request (a client's spare, a browser's preconnect) does not hold it.

use std::time::{Duration, Instant};

use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::json;

fn config(grace_ms: u64) -> String {
    FIXTURES_CONFIG.replace("[server]\n", &format!("[server]\nshutdown_grace_ms = {grace_ms}\n"))
}

#[tokio::test]
async fn sigterm_lets_calls_finish_and_closes_listen_streams() {
    let mut server = Server::start(&config(8_000));
    let mcp = server.mcp();

    let mut stream =
        mcp.open_stream("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    assert_eq!(stream.status, 200);
    let ack = stream.next(Duration::from_secs(5)).await.expect("acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let slow = tokio::spawn({
        let mcp = mcp.clone();
        async move { mcp.tool("sleep", json!({"ms": 1500})).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.signal("TERM");

    // The listen stream ends with its final response (the listen request's result).
    let last = stream.next(Duration::from_secs(5)).await.expect("final listen response");
    assert_eq!(last["id"], stream.id, "the response to the listen request: {last}");
    assert!(last.get("result").is_some(), "{last}");
    assert!(stream.next(Duration::from_secs(5)).await.is_none(), "then the stream ends");

    // The call in flight completes normally.
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.result()["content"][0]["text"], "slept 1500 ms");

    // New connections are refused once the signal is handled.
    let refused = reqwest::Client::new().get(format!("http://{}/healthz", server.addr)).send().await;
    assert!(refused.is_err(), "the listener is closed");

    let status = server.wait_exit(Duration::from_secs(8)).expect("exits within the grace period");
    assert!(status.success(), "exit status {status:?}; stderr:\n{}", server.stderr());
    assert!(signalled.elapsed() < Duration::from_secs(8), "within server.shutdown_grace_ms");
}

#[tokio::test]
async fn calls_longer_than_the_grace_period_are_cut_at_the_deadline() {
    let mut server = Server::start(&config(1_000));
    let mcp = server.mcp();
    let slow = tokio::spawn({
        let mcp = mcp.clone();
        async move {
            let body = mcp.body("tools/call", json!({"name": "sleep", "arguments": {"ms": 20_000}}));
            let headers = mcp_e2e::Mcp::headers_for(&body);
            let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
            mcp.try_post_raw(serde_json::to_vec(&body).unwrap(), &pairs).await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.signal("TERM");
    let status = server.wait_exit(Duration::from_secs(10)).expect("exits");
    let took = signalled.elapsed();
    assert!(status.success(), "exit status {status:?}; stderr:\n{}", server.stderr());
    assert!(took >= Duration::from_millis(900), "waited for the grace period: {took:?}");
    assert!(took < Duration::from_secs(5), "did not wait for the 20 s call: {took:?}");
    assert!(server.stderr().contains("grace period over"), "stderr:\n{}", server.stderr());
    // The client got no final answer: the call was cancelled, not completed.
    if let Ok(Ok(answer)) = slow.await {
        assert!(!String::from_utf8_lossy(&answer.raw).contains("slept 20000 ms"));
    }
}

/// Clients open connections they may never use (an HTTP client pool's spare, a browser's
/// preconnect, a balancer's probe). Such a connection, open TLS or not, is closed at once on
/// SIGTERM: it does not hold the process for the grace period (nor for the head timeout).
#[tokio::test]
async fn a_connection_that_never_sent_a_request_does_not_hold_the_shutdown() {
    let mut server = Server::start(&config(60_000));
    assert_eq!(server.mcp().tool("echo", json!({"text": "hi"})).await.text(0), "hi");
    let silent = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    // Accepted (the server waits for its first byte) before the signal.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal("TERM");
    let status = server.wait_exit(Duration::from_secs(15));
    assert!(status.is_some(), "still running 15 s after SIGTERM (grace 60 s); stderr:\n{}", server.stderr());
    assert!(status.unwrap().success(), "stderr:\n{}", server.stderr());
    assert!(!server.stderr().contains("grace period over"), "stderr:\n{}", server.stderr());
    drop(silent);
}
