//! Native TLS of the real binary: a certificate generated here (rcgen), a real client over
//! HTTP/2 (and HTTP/1.1) by ALPN, and the certificate reloaded when its files change, with a
//! broken new file leaving the old certificate in service.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_e2e::curl::curl;
use mcp_e2e::wait::eventually;
use mcp_e2e::{Mcp, Server};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

pub(crate) struct Ca {
    pub(crate) pem: String,
    issuer: Issuer<'static, KeyPair>,
}

pub(crate) fn ca() -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    // Names of their own: with rcgen's default name on both, OpenSSL-based clients (curl)
    // take the leaf for a self-signed certificate.
    params.distinguished_name.push(DnType::CommonName, "mcp-e2e test CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca { pem: cert.pem(), issuer: Issuer::new(params, key) }
}

/// A leaf for localhost / 127.0.0.1 signed by `ca`: (cert PEM, key PEM, cert DER).
pub(crate) fn leaf(ca: &Ca) -> (String, String, CertificateDer<'static>) {
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, "localhost");
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem(), cert.der().clone())
}

fn write(dir: &Path, cert: &str, key: &str) {
    std::fs::write(dir.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.join("key.pem"), key).unwrap();
}

fn config(dir: &Path) -> String {
    format!(
        "{}\n[tls]\ncert_file = \"{}\"\nkey_file = \"{}\"\nreload_interval_ms = 200\n",
        mcp_e2e::FIXTURES_CONFIG,
        dir.join("cert.pem").display(),
        dir.join("key.pem").display()
    )
}

fn client_config(ca_pem: &str, alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap()).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

async fn connect(
    addr: std::net::SocketAddr,
    config: Arc<rustls::ClientConfig>,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_rustls::TlsConnector::from(config)
        .connect(ServerName::IpAddress(addr.ip().into()), tcp)
        .await
        .expect("TLS handshake (the certificate chains to our CA and names 127.0.0.1)")
}

/// POSTs an MCP request over TLS with a real HTTP client connection (hyper), offering `alpn`;
/// returns the negotiated HTTP version, the status and the JSON answer.
async fn post(server: &Server, ca_pem: &str, alpn: &[&[u8]], body: &Value) -> (Version, u16, Value) {
    let res = send(server, ca_pem, alpn, body).await;
    let (version, status) = (res.version(), res.status().as_u16());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (version, status, serde_json::from_slice(&bytes).expect("JSON answer"))
}

/// The response to an MCP request sent over TLS, offering `alpn`, its body still to read.
async fn send(server: &Server, ca_pem: &str, alpn: &[&[u8]], body: &Value) -> hyper::Response<hyper::body::Incoming> {
    let tls = connect(server.addr, client_config(ca_pem, alpn)).await;
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    // HTTP/2 carries the authority in the URI (`:authority`), HTTP/1.1 in `Host`.
    let mut req = if h2 {
        Request::post(server.url.clone())
    } else {
        Request::post("/mcp").header("host", server.addr.to_string())
    };
    for (n, v) in Mcp::headers_for(body) {
        req = req.header(n, v);
    }
    let req = req.body(Full::new(Bytes::from(serde_json::to_vec(body).unwrap()))).unwrap();
    if h2 {
        let (mut send, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        send.send_request(req).await.unwrap()
    } else {
        let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        send.send_request(req).await.unwrap()
    }
}

/// The leaf certificate the server presents on a fresh handshake.
async fn presented(addr: std::net::SocketAddr, ca_pem: &str) -> CertificateDer<'static> {
    let tls = connect(addr, client_config(ca_pem, &[])).await;
    tls.get_ref().1.peer_certificates().expect("server certificate")[0].clone().into_owned()
}

/// A server on TLS with a leaf certificate of a new CA; the directory holds its files.
fn tls_server() -> (tempfile::TempDir, Ca, Server) {
    let dir = tempfile::tempdir().unwrap();
    let ca = ca();
    let (cert, key, _) = leaf(&ca);
    write(dir.path(), &cert, &key);
    let server = Server::start(&config(dir.path()));
    (dir, ca, server)
}

#[tokio::test]
async fn serves_http2_and_http1_over_tls() {
    let (dir, ca, server) = tls_server();
    assert!(server.url.starts_with("https://"), "{}", server.url);

    let mcp = Mcp::new(&server.url);
    let body = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": "over tls"}}));
    let (version, status, answer) = post(&server, &ca.pem, &[b"h2", b"http/1.1"], &body).await;
    assert_eq!((version, status), (Version::HTTP_2, 200), "ALPN picked h2");
    assert_eq!(answer["result"]["content"][0]["text"], "over tls");

    let (version, status, _) = post(&server, &ca.pem, &[b"http/1.1"], &mcp.body("tools/list", json!({}))).await;
    assert_eq!((version, status), (Version::HTTP_11, 200));

    // curl, as browsers and HTTPS stacks do, negotiates h2 by ALPN and sends no Host header.
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca.pem).unwrap();
    let ca_arg = ca_file.to_str().unwrap();
    let (version, status, _, text) = curl(&server.url, &["--http2", "--cacert", ca_arg], Some(&body));
    assert_eq!((version.as_str(), status), ("2", 200), "{text}");
    assert!(text.contains("over tls"), "{text}");
    let (version, status, _, _) = curl(&server.url, &["--http1.1", "--cacert", ca_arg], Some(&body));
    assert_eq!((version.as_str(), status), ("1.1", 200));

    // Plain HTTP on the TLS port is not served.
    let plain = reqwest::get(format!("http://{}/healthz", server.addr)).await;
    assert!(plain.is_err() || plain.unwrap().status() != 200);
}

#[tokio::test]
async fn listen_streams_over_tls_in_either_version() {
    let (_dir, ca, server) = tls_server();
    let listen =
        Mcp::new(&server.url).body("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    // Over HTTP/1.1 the stream is written outside hyper (the chunked, closing head says so),
    // through the same TLS session.
    for (alpn, version) in [(&b"http/1.1"[..], Version::HTTP_11), (b"h2", Version::HTTP_2)] {
        let res = send(&server, &ca.pem, &[alpn], &listen).await;
        assert_eq!((res.version(), res.status().as_u16()), (version, 200));
        let closing = res.headers().get("connection").is_some_and(|v| v == "close");
        assert_eq!(closing, version == Version::HTTP_11, "{:?}", res.headers());
        let mut body = res.into_body();
        let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("a first event within 5 s")
            .expect("a frame")
            .unwrap();
        let text = String::from_utf8_lossy(first.data_ref().expect("data")).into_owned();
        assert!(text.contains("notifications/subscriptions/acknowledged"), "{version:?}: {text}");
    }
}

#[tokio::test]
async fn certificate_is_reloaded_and_a_bad_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = ca();
    let (cert_a, key_a, der_a) = leaf(&ca);
    write(dir.path(), &cert_a, &key_a);
    let server = Server::start(&config(dir.path()));
    assert_eq!(presented(server.addr, &ca.pem).await, der_a);

    let (cert_b, key_b, der_b) = leaf(&ca);
    write(dir.path(), &cert_b, &key_b);
    let not_served = || "the new certificate is not served without a restart".to_owned();
    eventually(Duration::from_secs(5), not_served, || async {
        (presented(server.addr, &ca.pem).await == der_b).then_some(())
    })
    .await;

    // A key that does not match the certificate: logged, and B stays in service.
    let (_, key_c, _) = leaf(&ca);
    write(dir.path(), &cert_b, &key_c);
    server.log_line("keeping the current certificate").await;
    assert!(server.stderr().contains("tls.key_file"), "the log names the bad file: {}", server.stderr());
    assert_eq!(presented(server.addr, &ca.pem).await, der_b);
}

#[tokio::test]
async fn a_bad_certificate_stops_start_up_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "not a certificate", "not a key");
    let (status, stderr) = Server::start_failing(&config(dir.path()), &[]);
    assert!(!status.success());
    assert!(stderr.contains("tls.cert_file"), "{stderr}");
}
