//! Cost of authentication: the first verification of a new JWT access token (ES256, RS256),
//! a token already seen (digest + cache lookup), and a whole in-process `tools/call` with JWT
//! validation on against the same call with auth off (ratio, one run, interleaved rounds).
//! The issuer's key set is served by a loopback HTTP server this bench starts; the RSA key
//! comes from `openssl genrsa` (ring cannot generate RSA keys).
//! Run: `cargo bench -p mcp-runtime --bench auth`.

mod support;

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use mcp_runtime::auth::Authenticator;
use mcp_runtime::{AppState, Config};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};
use support::{Side, compare, report};

const ISS: &str = "https://idp.bench";
const AUD: &str = "https://mcp.bench/mcp";

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

struct Keys {
    es: EncodingKey,
    rs: EncodingKey,
    jwks: Value,
}

fn keys() -> Keys {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let es_pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let point = es_pair.public_key().as_ref();
    let pem = Command::new("openssl").args(["genrsa", "2048"]).output().expect("openssl (apt: openssl)").stdout;
    let der = Command::new("sh")
        .args(["-c", "openssl rsa -traditional -outform DER 2>/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&pem)?;
            c.wait_with_output()
        })
        .expect("openssl rsa")
        .stdout;
    let rs_pair = RsaKeyPair::from_der(&der).expect("PKCS#1 RSA key");
    let public = ring::rsa::PublicKeyComponents::<Vec<u8>>::from(rs_pair.public());
    let (modulus, exponent) = (public.n, public.e);
    Keys {
        es: EncodingKey::from_ec_der(pkcs8.as_ref()),
        rs: EncodingKey::from_rsa_der(&der),
        jwks: json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "es", "alg": "ES256", "x": b64(&point[1..33]), "y": b64(&point[33..])},
            {"kty": "RSA", "kid": "rs", "alg": "RS256", "n": b64(&modulus), "e": b64(&exponent)},
        ]}),
    }
}

fn token(keys: &Keys, alg: Algorithm, n: u32) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(if alg == Algorithm::ES256 { "es" } else { "rs" }.into());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": ISS, "aud": AUD, "sub": format!("user-{n}"), "exp": now + 3600, "iat": now,
                        "jti": format!("{n}"), "scope": "tools:read"});
    encode(&header, &claims, if alg == Algorithm::ES256 { &keys.es } else { &keys.rs }).unwrap()
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let keys = keys();
        let jwks = keys.jwks.to_string();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let jwks_uri = format!("http://{}/jwks", listener.local_addr().unwrap());
        let router = axum::Router::new().route("/jwks", axum::routing::get(move || async move { jwks }));
        tokio::spawn(async move { axum::serve(listener, router).await });
        let auth_toml = format!(
            "{}\n[auth]\nresource = \"{AUD}\"\n[[auth.issuers]]\nissuer = \"{ISS}\"\njwks_uri = \"{jwks_uri}\"\n",
            mcp_runtime::config::EMBEDDED_DEFAULT
        );
        let config = Config::from_toml(&auth_toml).unwrap();
        let auth = Authenticator::new(config.auth.clone().unwrap());
        auth.authenticate(Some(&token(&keys, Algorithm::ES256, 0))).await.expect("warm-up token verifies");
        for alg in [Algorithm::ES256, Algorithm::RS256] {
            let n = 2_000u32;
            let tokens: Vec<String> = (1..=n).map(|i| token(&keys, alg, i)).collect();
            let t = Instant::now();
            for tok in &tokens {
                black_box(auth.authenticate(Some(tok)).await.unwrap());
            }
            report(&format!("first verification of a new {alg:?} token"), n, t.elapsed());
            let seen = &tokens[0];
            let m = 200_000u32;
            let t = Instant::now();
            for _ in 0..m {
                black_box(auth.authenticate(Some(black_box(seen))).await.unwrap());
            }
            report(&format!("{alg:?} token already seen (digest + cache)"), m, t.elapsed());
        }
        tools_call_ratio(&keys, &auth_toml).await;
    });
}

async fn tools_call_ratio(keys: &Keys, auth_toml: &str) {
    let off = mcp_runtime::app(
        AppState::build(&Config::from_toml(mcp_runtime::config::EMBEDDED_DEFAULT).unwrap()).await.unwrap(),
    );
    let on = mcp_runtime::app(AppState::build(&Config::from_toml(auth_toml).unwrap()).await.unwrap());
    let token = token(keys, Algorithm::ES256, 1);
    compare(Side::new("auth off", &off, None), Side::new("JWT on, token already seen", &on, Some(&token)), ">= 0.9")
        .await;
}
