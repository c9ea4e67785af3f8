//! Production hardening, black-box: the real binary with real child processes, real loopback
//! upstreams and raw TCP clients. Each test is the regression test of one defect of the
//! "Production hardening" issue.

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_e2e::Server;
use mcp_e2e::procs::{processes_with, script, unique_seconds};
use mcp_e2e::wait::until;
use serde_json::json;

/// A tool whose processes leave its process group three ways: `setsid` (a new session),
/// `setsid sh -c` (a new session with a child of its own) and `set -m` in a subshell that
/// exits at once (a double fork: the sleeper is orphaned, in a group of its own).
fn escaping_tool(dir: &Path, timeout_ms: u64) -> String {
    let escape = script(
        dir,
        "escape",
        "setsid sleep \"$1\" &\nsetsid sh -c 'sleep \"$0\"; true' \"$1\" &\n(set -m; sleep \"$1\" &)\nsleep \"$1\"\nwait",
    );
    format!(
        r#"
[[adapters]]
name = "escapers"
kind = "cli"

[[adapters.tools]]
name = "escape"
description = "Sleeps in processes that leave the process group"
executable = "{escape}"
args = ["{{seconds}}"]
timeout_ms = {timeout_ms}
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string" }} }} }}
"#,
        escape = escape.display()
    )
}

/// Defect 2: a timed-out tool whose children left its process group leaves nothing behind.
#[tokio::test]
async fn a_timed_out_tool_leaves_no_process_even_outside_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&escaping_tool(dir.path(), 1000));
    let marker = unique_seconds(60);
    let a = s.mcp().tool("escape", json!({ "seconds": marker })).await;
    assert_eq!(a.result()["isError"], true, "{:?}", a.messages);
    let left = || processes_with(&marker);
    until(
        Duration::from_secs(5),
        || format!("processes with {marker} survived the timeout: {:?}", left()),
        || left().is_empty(),
    )
    .await;
}

/// Defect 2: when the runtime is killed with SIGKILL mid-call, the tool's processes die too,
/// the detached ones included.
#[tokio::test]
async fn a_killed_runtime_takes_its_tools_processes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(&escaping_tool(dir.path(), 60_000));
    let marker = unique_seconds(60);
    let mcp = s.mcp();
    let call = {
        let marker = marker.clone();
        tokio::spawn(async move { drop(mcp.tool("escape", json!({ "seconds": marker })).await) })
    };
    // Four sleepers (and the shells) once the script is running.
    until(
        Duration::from_secs(10),
        || "the tool never started its sleepers".into(),
        || processes_with(&marker).len() >= 4,
    )
    .await;
    s.signal("KILL");
    assert!(s.wait_exit(Duration::from_secs(5)).is_some(), "the runtime did not die");
    let left = || processes_with(&marker);
    until(
        Duration::from_secs(5),
        || format!("processes with {marker} outlived the runtime: {:?}", left()),
        || left().is_empty(),
    )
    .await;
    // The call fails with the connection (a panic inside the task): not the point here.
    call.abort();
}

/// Reads what the server sends until it closes the connection or `within` passes; `None`
/// when the connection is still open then.
async fn read_until_closed(tcp: &mut tokio::net::TcpStream, within: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt as _;
    let mut got = Vec::new();
    let end = tokio::time::Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(end, tcp.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(String::from_utf8_lossy(&got).into_owned()),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// One whole HTTP/1.1 response with a `Content-Length`, read off a kept-alive connection.
async fn read_response(tcp: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>()))
                .expect("a Content-Length")
                .expect("a number");
            if got.len() >= end + 4 + length {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf)).await.expect("an answer").unwrap();
        assert!(n > 0, "closed before the whole answer: {text}");
        got.extend_from_slice(&buf[..n]);
    }
}

/// `POST /mcp` with `body` as raw HTTP/1.1: a `Host` line per entry of `hosts`, the MCP
/// headers, `extra` header lines (each ending in CRLF), then the body.
fn raw_post(hosts: &[String], body: &serde_json::Value, extra: &str) -> String {
    let mut head = String::from("POST /mcp HTTP/1.1\r\n");
    for host in hosts {
        head.push_str(&format!("Host: {host}\r\n"));
    }
    for (name, value) in mcp_e2e::Mcp::headers_for(body) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.to_string();
    head.push_str(&format!("Content-Length: {}\r\n{extra}\r\n{body}", body.len()));
    head
}

/// Sends `bytes` one at a time, 100 ms apart, until the server closes the connection (true)
/// or 8 s have passed (false).
async fn trickle(tcp: &mut tokio::net::TcpStream, bytes: &[u8]) -> bool {
    use tokio::io::AsyncWriteExt as _;
    let started = Instant::now();
    for byte in bytes {
        if tcp.write_all(&[*byte]).await.is_err() || read_until_closed(tcp, Duration::from_millis(100)).await.is_some()
        {
            return true;
        }
        if started.elapsed() > Duration::from_secs(8) {
            break;
        }
    }
    false
}

const SLOW_LIMITS: &str = "[limits]\nheader_read_timeout_ms = 1000\nbody_read_timeout_ms = 1000\n";

/// Defect 7: RFC 9112 §3.2, "more than one Host header field line" is a 400; the same request
/// with one `Host` is served.
#[tokio::test]
async fn two_host_headers_are_a_bad_request() {
    use tokio::io::AsyncWriteExt as _;
    let s = Server::start("");
    let mcp = s.mcp();
    let send = async |hosts: &[String]| {
        let head = raw_post(hosts, &mcp.body("tools/list", json!({})), "Connection: close\r\n");
        let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
        tcp.write_all(head.as_bytes()).await.unwrap();
        read_until_closed(&mut tcp, Duration::from_secs(5)).await.expect("an answer")
    };
    let one = send(&[s.addr.to_string()]).await;
    assert!(one.starts_with("HTTP/1.1 200"), "one Host: {one}");
    for second in [s.addr.to_string(), "evil.example".to_owned()] {
        let answer = send(&[s.addr.to_string(), second.clone()]).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "Host: {second}: {answer}");
        assert!(answer.contains("more than one Host"), "{answer}");
    }
}

/// Defect 7: a request head trickled a byte at a time is cut at `header_read_timeout_ms`.
#[tokio::test]
async fn a_trickled_request_head_is_cut_at_the_header_read_timeout() {
    let s = Server::start(SLOW_LIMITS);
    let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let started = Instant::now();
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nX-Slow: {}\r\n", s.addr, "a".repeat(100));
    let closed = trickle(&mut tcp, head.as_bytes()).await;
    let took = started.elapsed();
    assert!(closed, "the connection was still open after {took:?}");
    assert!(took < Duration::from_secs(3), "closed only after {took:?}");
    // A connection that sends nothing at all is closed as well.
    let mut idle = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    assert!(read_until_closed(&mut idle, Duration::from_secs(3)).await.is_some(), "an idle connection stayed open");
}

/// The head timer of a kept-alive connection runs again for each request: after one request
/// is answered, the next head trickled a byte at a time is cut at `header_read_timeout_ms`,
/// counted from the answer; so is a kept-alive connection that then sends nothing.
#[tokio::test]
async fn a_kept_alive_connection_has_the_header_read_timeout_for_each_head() {
    use tokio::io::AsyncWriteExt as _;
    let s = Server::start(SLOW_LIMITS);
    let request = raw_post(&[s.addr.to_string()], &s.mcp().body("tools/list", json!({})), "");
    for then_trickle in [true, false] {
        let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
        // Two requests answered, 600 ms apart: a head timer armed for the first one fires
        // while the connection waits for the third head, which must not be cut then.
        for _ in 0..2 {
            tcp.write_all(request.as_bytes()).await.unwrap();
            let answer = read_response(&mut tcp).await;
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            tokio::time::sleep(Duration::from_millis(600)).await;
        }
        let started = Instant::now();
        if then_trickle {
            let closed = trickle(&mut tcp, request.as_bytes()).await;
            assert!(closed, "the trickled head was still being read after {:?}", started.elapsed());
        } else {
            assert!(
                read_until_closed(&mut tcp, Duration::from_secs(3)).await.is_some(),
                "an idle kept-alive connection stayed open"
            );
        }
        let took = started.elapsed();
        // 1 s from the last answer, of which 600 ms had passed.
        assert!(took > Duration::from_millis(200), "cut after {took:?}, before its own deadline");
        assert!(took < Duration::from_secs(3), "closed only after {took:?}");
    }
}

/// Defect 7: a body trickled a byte at a time gets 408 at `body_read_timeout_ms`, and the
/// connection is closed.
#[tokio::test]
async fn a_trickled_body_gets_408_at_the_body_read_timeout() {
    use tokio::io::AsyncWriteExt as _;
    let s = Server::start(SLOW_LIMITS);
    let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{",
        s.addr
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut answer = None;
    while started.elapsed() < Duration::from_secs(8) {
        if tcp.write_all(b" ").await.is_err() {
            break;
        }
        if let Some(a) = read_until_closed(&mut tcp, Duration::from_millis(200)).await {
            answer = Some(a);
            break;
        }
    }
    let took = started.elapsed();
    let answer = answer.unwrap_or_else(|| panic!("no answer, connection open after {took:?}"));
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_read_timeout_ms"), "{answer}");
    assert!(took < Duration::from_secs(3), "answered only after {took:?}");
}

/// Defect 7: at `limits.max_connections` the server stops accepting; a connection is served
/// once another one closes.
#[tokio::test]
async fn open_connections_are_capped() {
    use tokio::io::AsyncWriteExt as _;
    let s = Server::start("[limits]\nmax_connections = 2\nheader_read_timeout_ms = 60000\n");
    let hold_1 = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let _hold_2 = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut third = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let probe = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", s.addr);
    third.write_all(probe.as_bytes()).await.unwrap();
    assert_eq!(read_until_closed(&mut third, Duration::from_millis(700)).await, None, "served past the cap");
    drop(hold_1);
    let answer = read_until_closed(&mut third, Duration::from_secs(5)).await.expect("served once a slot freed");
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
}

/// Defect 8: a run over one of its limits becomes a tool error naming the limit.
#[tokio::test]
async fn a_tool_over_its_limits_is_a_tool_error_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // `tail` keeps a line in memory until its end, and /dev/zero has no newline.
    let memory = script(dir.path(), "memory", "head -c 400000000 /dev/zero | tail > /dev/null");
    let cpu = script(dir.path(), "cpu", "while :; do :; done");
    let forks = script(dir.path(), "forks", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 5 & done\nwait");
    let file = script(dir.path(), "file", "head -c 100000 /dev/zero > big");
    let tool = |name: &str, program: &Path, limits: &str| {
        format!(
            "[[adapters.tools]]\nname = \"{name}\"\ndescription = \"d\"\nexecutable = \"{}\"\n\
             working_dir = \"{}\"\ntimeout_ms = 20000\nlimits = {{ {limits} }}\n",
            program.display(),
            dir.path().display()
        )
    };
    let config = format!(
        "[[adapters]]\nname = \"limited\"\nkind = \"cli\"\n{}{}{}{}",
        tool("memory", &memory, "memory_bytes = 67108864"),
        tool("cpu", &cpu, "cpu_seconds = 1"),
        tool("forks", &forks, "processes = 4"),
        tool("file", &file, "file_bytes = 1000"),
    );
    let s = Server::start(&config);
    let mcp = s.mcp();
    for (name, limit) in [
        ("memory", "limits.memory_bytes"),
        ("cpu", "limits.cpu_seconds"),
        ("forks", "limits.processes"),
        ("file", "limits.file_bytes"),
    ] {
        let started = Instant::now();
        let a = mcp.tool(name, json!({})).await;
        assert_eq!(a.result()["isError"], true, "{name}: {:?}", a.messages);
        let text = a.result()["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains(limit), "{name}: {text}");
        assert!(!text.contains("timed out"), "{name}: {text}");
        assert!(started.elapsed() < Duration::from_secs(15), "{name} took {:?}", started.elapsed());
    }
}
