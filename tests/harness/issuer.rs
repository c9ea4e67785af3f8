//! A real OAuth 2.1 authorization server for the authorization tests: `oidc-provider` (npm,
//! installed by `tests/interop/setup.sh`) running `tests/interop/issuer.mjs` on loopback.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::paths;

/// A running issuer; killed when dropped.
pub struct Issuer {
    child: Child,
    /// Its port (restart on the same one to rotate its keys).
    pub port: u16,
    /// `http://127.0.0.1:<port>`: the exact `iss` of its tokens.
    pub url: String,
}

impl Issuer {
    /// Starts an issuer on a free loopback port.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().expect("addr").port();
        Self::start_on(port)
    }

    /// Starts an issuer on `port`, with fresh keys. Fails loudly when the interop install is missing.
    pub fn start_on(port: u16) -> Self {
        Self::start_with(port, &[])
    }

    /// Starts an issuer whose client `web` (secret `web-secret-0123456789`) may send browsers
    /// back to `redirect_uris` (a runtime's `/oauth/callback`).
    pub fn with_web_client(redirect_uris: &[&str]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().expect("addr").port();
        Self::start_with(port, redirect_uris)
    }

    fn start_with(port: u16, redirect_uris: &[&str]) -> Self {
        let dir = paths::interop_dir();
        let node = dir.join("bin/node");
        assert!(
            node.is_file() && dir.join("oidc/node_modules/oidc-provider").is_dir(),
            "Node 22 and oidc-provider are not installed under {}: run `bash tests/interop/setup.sh`",
            dir.display()
        );
        let mut child = Command::new(node)
            .arg(paths::repo().join("tests/interop/issuer.mjs"))
            .arg(port.to_string())
            .env("INTEROP_DIR", &dir)
            .env("WEB_REDIRECT_URIS", redirect_uris.join(","))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn node issuer.mjs");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("issuer listening on ") {
                    let _ = tx.send(());
                }
            }
        });
        if rx.recv_timeout(Duration::from_secs(30)).is_err() {
            let _ = child.kill();
            panic!("oidc-provider (tests/interop/issuer.mjs) did not start on port {port}");
        }
        Self { child, port, url: format!("http://127.0.0.1:{port}") }
    }

    /// An access token for `resource` by client credentials (client `machine`), with `scope`.
    pub async fn client_credentials(&self, resource: &str, scope: &str) -> String {
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", "machine"),
            ("client_secret", "machine-secret-0123456789"),
            ("scope", scope),
            ("resource", resource),
        ];
        let body: Vec<String> = form.iter().map(|(k, v)| format!("{k}={}", form_encode(v))).collect();
        let res = reqwest::Client::new()
            .post(format!("{}/token", self.url))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.join("&"))
            .send()
            .await
            .expect("token request");
        let body: Value = res.json().await.expect("token response");
        body["access_token"].as_str().unwrap_or_else(|| panic!("no access token: {body}")).to_owned()
    }

    /// A token of any `claims`, signed with the issuer's own `alg` key (header `kid` overridable).
    pub async fn sign(&self, claims: Value, kid: Option<&str>, alg: &str) -> String {
        self.sign_with(json!({ "claims": claims, "kid": kid, "alg": alg })).await
    }

    /// A token as `/test/sign` makes it from `request` (see tests/interop/issuer.mjs).
    pub async fn sign_with(&self, request: Value) -> String {
        let res =
            reqwest::Client::new().post(format!("{}/test/sign", self.url)).json(&request).send().await.expect("sign");
        assert!(res.status().is_success(), "issuer could not sign {request}");
        res.text().await.expect("signed token")
    }

    /// The issuer's counters: `jwks` (key-set fetches), `evil` (fetches of forged `jku` targets).
    pub async fn stats(&self) -> Value {
        reqwest::get(format!("{}/test/stats", self.url)).await.expect("stats").json().await.expect("stats json")
    }

    /// Key-set fetches the issuer has served.
    pub async fn jwks_fetches(&self) -> u64 {
        self.stats().await["jwks"].as_u64().expect("jwks count")
    }
}

/// `application/x-www-form-urlencoded` of one value (every byte but ASCII letters and digits escaped).
fn form_encode(v: &str) -> String {
    percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
