//! The JWT checks against keys made here (ES256, EdDSA): what passes, and each attack refused
//! with its own reason.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

use super::jwks::{Issuer, test_issuer};
use super::{Rejection, jwt};
use crate::config::IssuerConfig;

const ISS: &str = "https://idp.example.com";
const AUD: &str = "https://mcp.example.com/mcp";

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

struct Signer {
    pkcs8: Vec<u8>,
    jwk: Value,
    alg: Algorithm,
}

fn es256(kid: &str) -> Signer {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap().as_ref().to_vec();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng).unwrap();
    let point = pair.public_key().as_ref();
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "x": b64(&point[1..33]), "y": b64(&point[33..])});
    Signer { pkcs8, jwk, alg: Algorithm::ES256 }
}

fn ed25519(kid: &str) -> Signer {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref().to_vec();
    let pair = Ed25519KeyPair::from_pkcs8(&pkcs8).unwrap();
    let jwk = json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64(pair.public_key().as_ref())});
    Signer { pkcs8, jwk, alg: Algorithm::EdDSA }
}

impl Signer {
    fn sign(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(kid.into());
        let key = match self.alg {
            Algorithm::EdDSA => EncodingKey::from_ed_der(&self.pkcs8),
            _ => EncodingKey::from_ec_der(&self.pkcs8),
        };
        encode(&header, claims, &key).unwrap()
    }

    /// A token signed over a JOSE header written by hand (fields the library's type lacks).
    fn sign_with_header(&self, header: &Value, claims: &Value) -> String {
        let key = match self.alg {
            Algorithm::EdDSA => EncodingKey::from_ed_der(&self.pkcs8),
            _ => EncodingKey::from_ec_der(&self.pkcs8),
        };
        let input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &key, self.alg).unwrap();
        format!("{input}.{signature}")
    }
}

fn now() -> u64 {
    crate::clock::now_ms() / 1000
}

fn claims() -> Value {
    json!({"iss": ISS, "aud": AUD, "sub": "ada", "exp": now() + 300, "iat": now(), "scope": "tools:read files:write"})
}

fn issuer(signers: &[(&str, &Signer)]) -> Vec<Arc<Issuer>> {
    let config = IssuerConfig {
        issuer: ISS.into(),
        jwks_uri: Some("http://127.0.0.1:9/jwks".into()),
        audiences: vec![AUD.into()],
        refresh: Duration::from_secs(300),
        min_interval: Duration::from_secs(3600),
    };
    vec![test_issuer(config, signers.iter().map(|(kid, s)| (kid.to_string(), s.jwk.clone())).collect())]
}

async fn verify(issuers: &[Arc<Issuer>], token: &str) -> Result<(mcp_adapter_api::Identity, u64), Rejection> {
    jwt::verify(token, issuers, Duration::from_secs(30)).await
}

#[tokio::test]
async fn accepts_es256_and_eddsa_tokens_with_scopes_and_a_keyed_identity() {
    let (es, ed) = (es256("k1"), ed25519("k2"));
    let issuers = issuer(&[("k1", &es), ("k2", &ed)]);
    for (kid, signer) in [("k1", &es), ("k2", &ed)] {
        // One set of claims for the token and the check (the clock may tick in between).
        let claims = claims();
        let (who, exp) = verify(&issuers, &signer.sign(kid, &claims)).await.unwrap();
        assert_eq!(&*who.subject, "ada");
        assert_eq!(who.key(), "https://idp.example.com#ada");
        assert_eq!(&*who.scopes, ["tools:read", "files:write"]);
        assert_eq!(exp, claims["exp"].as_u64().unwrap());
    }
}

#[tokio::test]
async fn refuses_each_attack_with_its_reason() {
    let es = es256("k1");
    let issuers = issuer(&[("k1", &es)]);
    let good = es.sign("k1", &claims());
    let parts: Vec<&str> = good.split('.').collect();
    let with = |k: &str, v: Value| {
        let mut c = claims();
        c[k] = v;
        es.sign("k1", &c)
    };
    let none = format!("{}.{}.", b64(br#"{"alg":"none","typ":"JWT"}"#), parts[1]);
    let mut tampered = claims();
    tampered["sub"] = json!("root");
    let tampered = format!("{}.{}.{}", parts[0], b64(tampered.to_string().as_bytes()), parts[2]);
    // HS256 "signed" with the public key as the HMAC secret (RFC 8725 §2.1).
    let hs = {
        let mut h = Header::new(Algorithm::HS256);
        h.kid = Some("k1".into());
        encode(&h, &claims(), &EncodingKey::from_secret(es.jwk.to_string().as_bytes())).unwrap()
    };
    let foreign = es256("k1").sign("k1", &claims());
    // A valid signature over a header that lists a critical extension (RFC 7515 §4.1.11).
    let crit = {
        let mut h = Header::new(Algorithm::ES256);
        h.kid = Some("k1".into());
        let head = serde_json::to_value(&h).unwrap();
        let mut head = head.as_object().unwrap().clone();
        head.insert("crit".into(), json!(["exp-ext"]));
        head.insert("exp-ext".into(), json!(true));
        es.sign_with_header(&Value::Object(head), &claims())
    };
    let cases: Vec<(&str, String, Rejection)> = vec![
        ("alg none", none, Rejection::Malformed("the JOSE header is not a supported JWS header")),
        ("hs256 with the public key", hs, Rejection::WrongAlgorithm),
        ("tampered payload", tampered, Rejection::BadSignature),
        ("stripped signature", format!("{}.{}.", parts[0], parts[1]), Rejection::BadSignature),
        ("other key, same kid", foreign, Rejection::BadSignature),
        ("expired", with("exp", json!(now() - 120)), Rejection::Expired),
        ("not yet valid", with("nbf", json!(now() + 120)), Rejection::NotYetValid),
        ("issued a year ahead", with("iat", json!(now() + 365 * 24 * 3600)), Rejection::IssuedInFuture),
        ("critical extension", crit, Rejection::CriticalExtension("[\"exp-ext\"]".into())),
        ("wrong issuer", with("iss", json!("https://evil.example.com")), Rejection::UntrustedIssuer),
        ("wrong audience", with("aud", json!("https://other.example.com")), Rejection::WrongAudience),
        ("unknown kid", es.sign("nope", &claims()), Rejection::UnknownKey),
        (
            "broken base64",
            format!("{}.!!!.{}", parts[0], parts[2]),
            Rejection::Malformed("the payload is not base64url"),
        ),
    ];
    for (what, token, want) in cases {
        assert_eq!(verify(&issuers, &token).await.unwrap_err(), want, "{what}");
    }
    // Within the leeway, still accepted.
    assert!(verify(&issuers, &with("exp", json!(now() - 5))).await.is_ok());
    assert!(verify(&issuers, &with("iat", json!(now() + 5))).await.is_ok());
}

/// An issuer whose key set cannot be fetched (nothing listens there) answers an unknown `kid`
/// with what a person can act on: the keys could not be fetched, not "a key it does not publish".
#[tokio::test]
async fn an_unknown_key_while_the_key_set_cannot_be_fetched_says_so() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let es = es256("k1");
    let config = IssuerConfig {
        issuer: ISS.into(),
        jwks_uri: Some("http://127.0.0.1:9/jwks".into()),
        audiences: vec![AUD.into()],
        refresh: Duration::from_secs(300),
        min_interval: Duration::from_millis(1),
    };
    let issuers = vec![Issuer::start(config)];
    let err = verify(&issuers, &es.sign("k1", &claims())).await.unwrap_err();
    assert_eq!(err, Rejection::KeysUnavailable);
    assert!(err.to_string().contains("its key set could not be fetched"), "{err}");
}

/// A token that arrives while the first fetch of the issuer's keys is in flight (a replica
/// just started, the issuer slow to answer) waits for that fetch and is accepted; it is not
/// refused as signed with "a key its issuer does not publish".
#[tokio::test]
async fn a_token_during_the_first_key_fetch_waits_for_it() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let es = es256("k1");
    let body = json!({"keys": [es.jwk]}).to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks_uri = format!("http://{}/jwks", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let _ = tcp.read(&mut [0; 4096]).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = tcp.write_all(format!("{head}{body}").as_bytes()).await;
            });
        }
    });
    let config = IssuerConfig {
        issuer: ISS.into(),
        jwks_uri: Some(jwks_uri),
        audiences: vec![AUD.into()],
        refresh: Duration::from_secs(300),
        min_interval: Duration::from_secs(60),
    };
    let issuers = vec![Issuer::start(config)];
    // The background refresh starts its fetch; the token comes while it waits for the answer.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(issuers[0].fetches(), 1, "the first fetch is in flight");
    let claims = verify(&issuers, &es.sign("k1", &claims())).await;
    assert!(claims.is_ok(), "{claims:?}");
    assert_eq!(issuers[0].fetches(), 1, "the token waited for that fetch rather than starting another");
}
