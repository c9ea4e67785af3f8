//! Prism (`@stoplight/prism-cli`, installed by `tests/openapi/setup.sh`): a real mock server
//! generated from an OpenAPI document, which validates every request it gets against it
//! (parameters, bodies, security) and answers with the document's examples.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where `tests/openapi/setup.sh` installs its parts: `$OPENAPI_DIR`, else `target/openapi`.
pub fn openapi_dir() -> PathBuf {
    std::env::var_os("OPENAPI_DIR").map(PathBuf::from).unwrap_or_else(|| crate::paths::repo().join("target/openapi"))
}

/// A running `prism mock`, killed when dropped.
pub struct Prism {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Prism {
    /// Mocks `spec` on a free loopback port; fails loudly when Prism is not installed or
    /// does not listen within 60 s.
    pub fn start(spec: &Path) -> Self {
        let bin = openapi_dir().join("prism/node_modules/.bin/prism");
        assert!(bin.is_file(), "Prism is not installed at {}: run `bash tests/openapi/setup.sh`", bin.display());
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let child = Command::new(&bin)
            .args(["mock", "--host", "127.0.0.1", "--port", &port.to_string()])
            .arg(spec)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn prism");
        let mut prism = Self { child, base: format!("http://127.0.0.1:{port}") };
        let end = Instant::now() + Duration::from_secs(60);
        // Ready when it answers HTTP (its port opens while it is still compiling the document).
        while !answers_http(port) {
            if let Ok(Some(status)) = prism.child.try_wait() {
                panic!("prism exited before listening: {status}");
            }
            assert!(Instant::now() < end, "prism did not listen on port {port} within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        prism
    }
}

/// Whether something on `port` answers `GET /` with an HTTP status line.
fn answers_http(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
