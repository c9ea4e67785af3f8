//! The runtime as an OAuth 2.1 client (draft-ietf-oauth-v2-1 § 4.1): an authorization server's
//! endpoints (configured, or discovered once from its RFC 8414 metadata), the authorization
//! request with PKCE (S256 always) and an RFC 8707 resource, and the token requests for a
//! code and for a refresh. Tokens stay in [`Grant`]s (whose `Debug` shows none); no error text quotes one.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_adapter_api::UserToken;
use ring::rand::{SecureRandom as _, SystemRandom};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::clock::now_ms;
use crate::config::OAuthClient;

/// Largest token answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// One authorization server as the runtime's client there.
#[derive(Debug)]
pub struct Client {
    /// As configured.
    pub config: OAuthClient,
    endpoints: OnceCell<Arc<Endpoints>>,
}

/// Where a client goes at its authorization server.
#[derive(Debug, Clone)]
pub struct Endpoints {
    /// The authorization endpoint (browsers).
    pub authorize: String,
    /// The token endpoint.
    pub token: String,
    /// The revocation endpoint (RFC 7009), when the server's metadata names one.
    pub revoke: Option<String>,
}

/// What a token endpoint granted (RFC 6749 § 5.1), kept in the vault. `Debug` shows no token.
#[derive(Clone, Serialize, Deserialize)]
pub struct Grant {
    /// The access token.
    #[serde(rename = "a")]
    pub access_token: String,
    /// The refresh token, when granted.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (ms since the epoch), when the server said.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// When the caller connected (ms since the epoch): kept across refreshes.
    #[serde(rename = "s", default)]
    pub connected_at_ms: u64,
    /// The access token as calls carry it, made once per opened grant.
    #[serde(skip)]
    bearer: std::sync::OnceLock<Option<UserToken>>,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at_ms", &self.expires_at_ms)
            .field("connected_at_ms", &self.connected_at_ms)
            .finish_non_exhaustive()
    }
}

impl Grant {
    /// A grant of `access_token` made now, with its refresh token and expiry when known.
    pub fn new(access_token: String, refresh_token: Option<String>, expires_at_ms: Option<u64>) -> Self {
        Self {
            access_token,
            refresh_token,
            expires_at_ms,
            connected_at_ms: now_ms(),
            bearer: std::sync::OnceLock::new(),
        }
    }

    /// The access token as a call carries it ([`mcp_adapter_api::CallContext::user_token`]);
    /// `None` for a token no header can carry.
    pub fn bearer(&self) -> Option<UserToken> {
        self.bearer.get_or_init(|| UserToken::bearer(&self.access_token)).clone()
    }

    /// Whether the access token expires within `margin` (unknown expiry: never).
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at_ms.is_some_and(|at| at <= now_ms().saturating_add(margin.as_millis() as u64))
    }
}

/// Why a token request failed: the server's `error` (RFC 6749 § 5.2) or what went wrong on the
/// way, never a token or a code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The server refused (`invalid_grant`, `invalid_client`, ...).
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// No usable answer.
    #[error("{0}")]
    Failed(String),
}

/// PKCE (RFC 7636): a verifier of 32 random bytes and its S256 challenge.
pub fn pkce(rng: &SystemRandom) -> (String, String) {
    let verifier = random(rng, 32);
    let challenge = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()));
    (verifier, challenge)
}

/// `n` random bytes as base64url.
pub fn random(rng: &SystemRandom, n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rng.fill(&mut bytes).expect("system randomness");
    URL_SAFE_NO_PAD.encode(bytes)
}

impl Client {
    /// A client as configured; endpoints are discovered on first use.
    pub fn new(config: OAuthClient) -> Self {
        Self { config, endpoints: OnceCell::new() }
    }

    /// The endpoints: configured, or from the issuer's metadata (RFC 8414; fetched once, a
    /// failure is retried on the next use).
    pub async fn endpoints(&self, http: &reqwest::Client) -> Result<Arc<Endpoints>, String> {
        self.endpoints
            .get_or_try_init(|| async {
                if let Some((authorize, token)) = &self.config.endpoints {
                    return Ok(Arc::new(Endpoints {
                        authorize: authorize.clone(),
                        token: token.clone(),
                        revoke: None,
                    }));
                }
                let issuer = self.config.issuer.as_deref().unwrap_or_default();
                let doc =
                    crate::auth::jwks::metadata(http, issuer, &["authorization_endpoint", "token_endpoint"]).await?;
                let at = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
                Ok(Arc::new(Endpoints {
                    authorize: at("authorization_endpoint").unwrap_or_default(),
                    token: at("token_endpoint").unwrap_or_default(),
                    revoke: at("revocation_endpoint"),
                }))
            })
            .await
            .cloned()
    }

    /// Revokes `grant` at its authorization server (RFC 7009 § 2.1: the refresh token, which
    /// revokes the grant, else the access token); `Ok(false)` when the server names no
    /// revocation endpoint.
    pub async fn revoke(&self, http: &reqwest::Client, grant: &Grant) -> Result<bool, TokenError> {
        let endpoints = self.endpoints(http).await.map_err(TokenError::Failed)?;
        let Some(endpoint) = &endpoints.revoke else { return Ok(false) };
        let (token, hint) = match &grant.refresh_token {
            Some(r) => (r.as_str(), "refresh_token"),
            None => (grant.access_token.as_str(), "access_token"),
        };
        let form = vec![("token", token), ("token_type_hint", hint)];
        let res = self.send(http, endpoint, form).await?;
        let status = res.status();
        if status.is_success() {
            return Ok(true);
        }
        // RFC 7009 § 2.2.1: errors as RFC 6749 § 5.2 (`unsupported_token_type`, ...).
        let doc: Value = res.json().await.unwrap_or_default();
        let error = doc.get("error").and_then(Value::as_str).unwrap_or("no error code");
        Err(TokenError::Refused(format!("HTTP {status}: {}", short(error))))
    }

    /// The authorization request's URL (RFC 6749 § 4.1.1, RFC 7636 § 4.3, RFC 8707 § 2).
    pub fn authorize_url(&self, endpoint: &str, redirect_uri: &str, state: &str, challenge: &str) -> String {
        let mut url = url::Url::parse(endpoint).unwrap_or_else(|_| url::Url::parse("http://invalid/").expect("url"));
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &self.config.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("state", state)
                .append_pair("code_challenge", challenge)
                .append_pair("code_challenge_method", "S256");
            if !self.config.scopes.is_empty() {
                q.append_pair("scope", &self.config.scopes.join(" "));
            }
            if let Some(r) = &self.config.resource {
                q.append_pair("resource", r);
            }
        }
        url.into()
    }

    /// Trades an authorization code (RFC 6749 § 4.1.3, with the PKCE verifier).
    pub async fn redeem(
        &self,
        http: &reqwest::Client,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
    ) -> Result<Grant, TokenError> {
        let form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ];
        self.token(http, form).await
    }

    /// A new access token for a refresh token (RFC 6749 § 6); a server that rotates refresh
    /// tokens returns a new one, else the old one stays.
    pub async fn refresh(&self, http: &reqwest::Client, refresh_token: &str) -> Result<Grant, TokenError> {
        let form = vec![("grant_type", "refresh_token"), ("refresh_token", refresh_token)];
        let mut grant = self.token(http, form).await?;
        grant.refresh_token.get_or_insert_with(|| refresh_token.to_owned());
        Ok(grant)
    }

    /// POSTs `form` to `endpoint` as this client (client_secret_basic, RFC 6749 § 2.3.1, for a
    /// confidential client; the id alone for a public one).
    async fn send(
        &self,
        http: &reqwest::Client,
        endpoint: &str,
        mut form: Vec<(&str, &str)>,
    ) -> Result<reqwest::Response, TokenError> {
        let mut req = http.post(endpoint).header("accept", "application/json");
        req = match &self.config.client_secret {
            Some(secret) => req.basic_auth(form_encode(&self.config.client_id), Some(form_encode(secret.expose_str()))),
            None => {
                form.push(("client_id", &self.config.client_id));
                req
            }
        };
        let body: String = form.iter().map(|(k, v)| format!("{k}={}", form_encode(v))).collect::<Vec<_>>().join("&");
        req.header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| TokenError::Failed(format!("{endpoint}: {}", transport(&e))))
    }

    async fn token(&self, http: &reqwest::Client, mut form: Vec<(&str, &str)>) -> Result<Grant, TokenError> {
        let endpoints = self.endpoints(http).await.map_err(TokenError::Failed)?;
        let endpoint = &endpoints.token;
        if let Some(r) = &self.config.resource {
            form.push(("resource", r));
        }
        let res = self.send(http, endpoint, form).await?;
        let status = res.status();
        let bytes = res.bytes().await.map_err(|e| TokenError::Failed(format!("{endpoint}: {}", transport(&e))))?;
        if bytes.len() > MAX_ANSWER_BYTES {
            return Err(TokenError::Failed(format!("{endpoint}: an answer larger than {MAX_ANSWER_BYTES} bytes")));
        }
        let doc: Value = serde_json::from_slice(&bytes)
            .map_err(|_| TokenError::Failed(format!("{endpoint}: HTTP {status}, not JSON")))?;
        if !status.is_success() {
            let error = doc.get("error").and_then(Value::as_str).unwrap_or("no error code");
            let description = doc.get("error_description").and_then(Value::as_str).map(short).unwrap_or_default();
            return Err(TokenError::Refused(format!("{error} {description}").trim().to_owned()));
        }
        let access_token = doc.get("access_token").and_then(Value::as_str).filter(|t| !t.is_empty());
        let Some(access_token) = access_token else {
            return Err(TokenError::Failed(format!("{endpoint}: no access_token in the answer")));
        };
        if doc.get("token_type").and_then(Value::as_str).is_some_and(|t| !t.eq_ignore_ascii_case("bearer")) {
            return Err(TokenError::Failed(format!("{endpoint}: a token that is not a Bearer token")));
        }
        let expires_at_ms =
            doc.get("expires_in").and_then(Value::as_u64).map(|s| now_ms().saturating_add(s.saturating_mul(1000)));
        let refresh_token = doc.get("refresh_token").and_then(Value::as_str).map(str::to_owned);
        Ok(Grant::new(access_token.to_owned(), refresh_token, expires_at_ms))
    }
}

/// `application/x-www-form-urlencoded` (RFC 6749 Appendix B).
fn form_encode(v: &str) -> String {
    url::form_urlencoded::byte_serialize(v.as_bytes()).collect()
}

/// An error description cut to a line (it is logged and may be shown to a person).
fn short(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// What went wrong on the way, without the URL (which may carry a query) or a body.
fn transport(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "no answer in time"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "the exchange failed"
    }
}
