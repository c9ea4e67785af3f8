//! Long calls survive proxies: a 40 s tool call through a real nginx whose
//! `proxy_read_timeout` is 20 s completes, because the runtime sends an SSE keep-alive
//! comment every 5 s. Slow by nature (40 s): the one such test.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::json;

/// nginx from the system, installed with apt when missing; no nginx is a failure, not a skip.
fn nginx_binary() -> String {
    for path in ["/usr/sbin/nginx", "/usr/bin/nginx"] {
        if Path::new(path).exists() {
            return path.to_owned();
        }
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get").args(args).env("DEBIAN_FRONTEND", "noninteractive").status().is_ok_and(|s| s.success())
    };
    let installed = apt(&["install", "-y", "-qq", "--no-install-recommends", "nginx"])
        || (apt(&["update", "-qq"]) && apt(&["install", "-y", "-qq", "--no-install-recommends", "nginx"]));
    assert!(installed && Path::new("/usr/sbin/nginx").exists(), "nginx is missing and `apt-get install nginx` failed");
    "/usr/sbin/nginx".to_owned()
}

/// A foreground nginx proxying 127.0.0.1:`port` → `upstream`, killed on drop. One process
/// (`master_process off`), so killing it leaves no worker behind.
struct Nginx {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_nginx(upstream: SocketAddr, port: u16) -> Nginx {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let conf = format!(
        r#"
worker_processes 1;
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://{upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            proxy_read_timeout 20s;
            proxy_buffering off;
        }}
    }}
}}
"#
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let child = Command::new(nginx_binary())
        .args(["-p", &d.to_string(), "-c", "nginx.conf", "-g", "daemon off; master_process off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start nginx");
    let nginx = Nginx { child, _dir: dir };
    let end = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "nginx did not start listening on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    nginx
}

#[tokio::test]
async fn a_40_second_call_survives_a_20_second_proxy_read_timeout() {
    let config = FIXTURES_CONFIG
        .replace("call_timeout_ms = 5000", "call_timeout_ms = 60000")
        .replace("[server]\n", "[server]\nsse_keepalive_ms = 5000\n");
    let server = Server::start(&config);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _nginx = start_nginx(server.addr, port);

    let proxied = mcp_e2e::Mcp::new(&format!("http://127.0.0.1:{port}/mcp"));
    let started = Instant::now();
    let mut stream = proxied.open_stream("tools/call", json!({"name": "sleep", "arguments": {"ms": 40_000}})).await;
    assert_eq!(stream.status, 200, "through nginx");
    let raw = stream.raw_for(Duration::from_secs(60)).await;
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&raw);

    let messages = mcp_e2e::client::sse_messages(&raw);
    let last = messages.last().unwrap_or_else(|| panic!("no final message after {took:?}: {text:?}"));
    assert_eq!(last["id"], stream.id);
    assert_eq!(last["result"]["content"][0]["text"], "slept 40000 ms", "{last}");
    assert!(took >= Duration::from_secs(40), "the call really lasted past two read timeouts: {took:?}");
    let comments = text.matches(": keep-alive").count();
    assert!(comments >= 7, "a keep-alive comment every 5 s kept nginx reading: {comments} in {took:?}");
}
