//! curl as a real HTTP client (HTTP/2 over TLS by ALPN, h2c with prior knowledge, HTTP/1.1
//! with headers left out), for what a hand-built request would get wrong.

use std::process::Command;

use serde_json::Value;

use crate::Mcp;

/// Runs curl with `args` plus the conforming headers and body of `body`; returns
/// (HTTP version, status, response headers, body).
pub fn curl(url: &str, args: &[&str], body: Option<&Value>) -> (String, u16, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (head, out) = (dir.path().join("head"), dir.path().join("body"));
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "20", "-o"]).arg(&out).arg("-D").arg(&head);
    cmd.args(["-w", "%{http_version} %{http_code}"]).args(args);
    if let Some(body) = body {
        for (name, value) in Mcp::headers_for(body) {
            cmd.arg("-H").arg(format!("{name}: {value}"));
        }
        cmd.arg("--data-binary").arg(body.to_string());
    }
    let run = cmd.arg(url).output().expect("curl is installed (apt package curl)");
    assert!(run.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&run.stderr));
    let written = String::from_utf8(run.stdout).unwrap();
    let (version, status) = written.split_once(' ').unwrap();
    let headers = std::fs::read_to_string(head).unwrap().to_ascii_lowercase();
    (version.to_owned(), status.parse().unwrap(), headers, std::fs::read_to_string(out).unwrap())
}
