//! Hostile input: every malformed request gets a clear 4xx, never a 500 or a panic, and no
//! other request is affected.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::json;

const JSON_HEADERS: [(&str, &[u8]); 4] = [
    ("content-type", b"application/json"),
    ("accept", b"application/json, text/event-stream"),
    ("mcp-protocol-version", b"2026-07-28"),
    ("mcp-method", b"tools/list"),
];

fn assert_4xx(a: &mcp_e2e::Answer, what: &str) {
    assert!((400..500).contains(&a.status), "{what}: status {}", a.status);
}

#[tokio::test]
async fn hostile_bodies_get_4xx_and_the_server_keeps_serving() {
    let s = Server::start(FIXTURES_CONFIG);
    let mcp = s.mcp();

    let truncated = serde_json::to_vec(&mcp.body("tools/list", json!({}))).unwrap();
    let a = mcp.post_raw(truncated[..truncated.len() / 2].to_vec(), &JSON_HEADERS).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32700)));
    assert!(a.error_message().contains("not valid JSON"));

    // 10 MB body: over the default 4 MiB limit. The server answers 413 from Content-Length
    // without reading the upload, so the client may see the answer or a closed connection
    // while still sending; either way nothing is read and the server goes on (checked below).
    let mut big = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": ""}}));
    big["params"]["arguments"]["text"] = json!("x".repeat(10 * 1024 * 1024));
    if let Ok(a) = mcp.try_post_raw(serde_json::to_vec(&big).unwrap(), &JSON_HEADERS).await {
        assert_eq!(a.status, 413);
        assert!(a.error_message().contains("max_body_bytes"));
    }

    // 10,000-deep nesting.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let a = mcp.post_raw(deep.into_bytes(), &JSON_HEADERS).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32700)));
    let deep_obj = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}{}}}"#,
        r#"{"a":"#.repeat(10_000),
        "}".repeat(10_000)
    );
    let a = mcp.post_raw(deep_obj.into_bytes(), &JSON_HEADERS).await;
    assert_4xx(&a, "deep object");

    // Invalid UTF-8 inside a string.
    let mut bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"#.to_vec();
    bytes.extend_from_slice(&[b'"', 0xff, 0xfe, b'"', b'}', b'}']);
    let a = mcp.post_raw(bytes, &JSON_HEADERS).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32700)));

    // Empty body, NUL bytes, a bare number.
    for body in [&b""[..], b"\0\0\0", b"42"] {
        let a = mcp.post_raw(body.to_vec(), &JSON_HEADERS).await;
        assert_4xx(&a, "odd body");
    }

    // Wrong types everywhere in the request.
    for bad in [
        json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": []}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": ["2026-07-28"], "io.modelcontextprotocol/clientCapabilities": {}}}}),
    ] {
        let a = mcp.post_raw(serde_json::to_vec(&bad).unwrap(), &JSON_HEADERS).await;
        assert_4xx(&a, &bad.to_string());
    }

    // Header values: non-ASCII bytes, and a huge one.
    let body = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    let mut h: Vec<(String, Vec<u8>)> = Mcp::headers_for(&body).into_iter().map(|(n, v)| (n, v.into_bytes())).collect();
    h.retain(|(n, _)| n != "mcp-name");
    h.push(("mcp-name".into(), vec![b'e', 0xe9, b'o']));
    let pairs: Vec<(&str, &[u8])> = h.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    let a = mcp.post_raw(serde_json::to_vec(&body).unwrap(), &pairs).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32020)));
    let huge = vec![b'a'; 1024 * 1024];
    let mut pairs: Vec<(&str, &[u8])> = JSON_HEADERS.to_vec();
    pairs.push(("mcp-name", &huge));
    // hyper refuses a 1 MiB head with 431 and closes the connection, possibly while the
    // client is still writing it: then the client sees the reset, not the answer.
    if let Ok(a) = mcp.try_post_raw(serde_json::to_vec(&mcp.body("tools/list", json!({}))).unwrap(), &pairs).await {
        assert_4xx(&a, "huge header");
    }

    // Still healthy, and still correct.
    let a = mcp.tool("echo", json!({"text": "after the storm"})).await;
    assert_eq!(a.result()["content"][0]["text"], "after the storm");
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let s = Server::start(&FIXTURES_CONFIG.replace("page_size = 100", "page_size = 100\nmax_body_bytes = 65536"));
    let mcp = s.mcp();
    let mut big = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": ""}}));
    big["params"]["arguments"]["text"] = json!("x".repeat(100_000));
    let a = mcp.post_raw(serde_json::to_vec(&big).unwrap(), &JSON_HEADERS).await;
    assert_eq!((a.status, a.error_code()), (413, Some(-32600)));
    assert!(a.error_message().contains("max_body_bytes (65536 bytes)"), "{}", a.error_message());
    // Chunked uploads without Content-Length are cut off at the limit too.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(serde_json::to_vec(&big).unwrap())];
    let res = reqwest::Client::new()
        .post(&s.url)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 413);
    assert_eq!(mcp.tool("echo", json!({"text": "ok"})).await.status, 200);
}

#[tokio::test]
async fn garbage_on_the_socket_does_not_hurt_other_clients() {
    let s = Server::start(FIXTURES_CONFIG);
    let addr = s.addr;
    let junk = std::thread::spawn(move || {
        for payload in [
            &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
            b"GARBAGE / HTTP/9.9\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nContent-Length: 99999\r\n\r\n{",
        ] {
            let mut c = TcpStream::connect(addr).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = c.write_all(payload);
            let mut buf = [0u8; 256];
            let _ = c.read(&mut buf);
        }
    });
    // Meanwhile, and after, normal requests succeed.
    let mcp = s.mcp();
    let answers = futures_util::future::join_all((0..20).map(|i| {
        let mcp = mcp.clone();
        async move { mcp.tool("echo", json!({"text": format!("n{i}")})).await }
    }))
    .await;
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a.result()["content"][0]["text"], format!("n{i}"));
    }
    junk.join().unwrap();
    assert_eq!(mcp.call("server/discover", json!({})).await.status, 200);
}
