//! Per-caller upstream credentials by OAuth 2.0 Token Exchange (RFC 8693): the caller's own
//! access token (the subject token the runtime puts in [`Identity`]) is traded at the
//! authorization server for a token meant for the upstream (its `audience` / `resource`),
//! which goes out as `Authorization: Bearer`. The caller's token itself never leaves for the
//! upstream.
//!
//! Exchanged tokens are cached per caller (a bounded cache keyed by the SHA-256 of the
//! caller's `issuer#subject`; one [`TokenExchange`] serves one upstream) until shortly
//! before their `expires_in`, never beyond; a token without `expires_in` serves one call.
//! Concurrent calls of one caller share one exchange (moka's `try_get_with`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use mcp_adapter_api::{AdapterError, CallContext, Environment, Secret, SecretSource};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Client, redirect};
use serde::Deserialize;

use crate::config::{ClientAuthMethod, ConfigProblem, TokenExchangeConfig};

const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// Largest token endpoint answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Longest `error_description` repeated to the caller.
const MAX_DESCRIPTION_CHARS: usize = 300;

/// Why no upstream token could be had. None of the messages carries a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// The call carries no access token to exchange (auth off, a static token, a task run
    /// after its request).
    #[error(
        "its upstream is called with a token exchanged for the caller's own OAuth access token (RFC 8693), and \
         this call carried none: call it with an access token from a configured issuer, not a static token or \
         no token"
    )]
    NoSubjectToken,
    /// The authorization server answered with an OAuth error (RFC 6749 § 5.2).
    #[error("the token exchange at {endpoint} was refused: {error}{}", description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The token endpoint.
        endpoint: String,
        /// `error`.
        error: String,
        /// `error_description`, shortened.
        description: Option<String>,
    },
    /// The token endpoint could not be reached or answered something that is not a token.
    #[error("the token exchange at {endpoint} failed: {problem}")]
    Failed {
        /// The token endpoint.
        endpoint: String,
        /// What went wrong.
        problem: String,
    },
}

/// An exchanged token and how long it may be reused.
#[derive(Debug)]
struct Exchanged {
    header: HeaderValue,
    reuse_for: Duration,
}

/// Each entry lives as long as its own token allows.
struct UntilExpiry;

impl moka::Expiry<[u8; 32], Arc<Exchanged>> for UntilExpiry {
    fn expire_after_create(&self, _: &[u8; 32], value: &Arc<Exchanged>, _: Instant) -> Option<Duration> {
        Some(value.reuse_for)
    }
}

/// The token exchange of one upstream: its client, its settings and its cache.
pub struct TokenExchange {
    endpoint: String,
    client_id: String,
    secret: Secret,
    method: ClientAuthMethod,
    /// The fixed form fields after the subject token (`audience`, `resource`, `scope`, ...).
    fields: String,
    timeout: Duration,
    client: Client,
    cache: moka::future::Cache<[u8; 32], Arc<Exchanged>>,
    exchanges: AtomicU64,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl TokenExchange {
    /// Checks `config` (at `key`, e.g. `token_exchange`) and resolves the client secret.
    pub fn new(config: &TokenExchangeConfig, key: &str, env: &Environment) -> Result<Self, ConfigProblem> {
        let at = |k: &str, p: &str| ConfigProblem::new(format!("{key}.{k}"), p);
        let endpoint = config.token_endpoint.trim();
        if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) || endpoint.contains('#') {
            return Err(at("token_endpoint", "must be an http(s) URL without a fragment"));
        }
        if config.client_id.is_empty() {
            return Err(at("client_id", "must not be empty"));
        }
        if config.audience.is_none() && config.resource.is_none() {
            return Err(ConfigProblem::new(
                key,
                "set audience or resource (or both): the upstream the exchanged token is meant for",
            ));
        }
        if !(1..=600_000).contains(&config.timeout_ms) {
            return Err(at("timeout_ms", "must be between 1 and 600000 (ten minutes)"));
        }
        if config.cache_capacity == 0 {
            return Err(at("cache_capacity", "must be at least 1"));
        }
        let secret = SecretSource::new(key, config.client_secret_env.as_deref(), config.client_secret_file.as_deref())
            .stem("client_secret")
            .resolve(env)?;
        let mut fields =
            format!("&subject_token_type={}&requested_token_type={}", enc(ACCESS_TOKEN_TYPE), enc(ACCESS_TOKEN_TYPE));
        for (name, value) in [("audience", &config.audience), ("resource", &config.resource), ("scope", &config.scope)]
        {
            if let Some(v) = value {
                fields.push_str(&format!("&{name}={}", enc(v)));
            }
        }
        if config.client_auth_method == ClientAuthMethod::ClientSecretPost {
            fields.push_str(&format!(
                "&client_id={}&client_secret={}",
                enc(&config.client_id),
                enc(secret.expose_str())
            ));
        }
        crate::client::ensure_crypto_provider();
        let client = Client::builder()
            .connect_timeout(Duration::from_secs(5))
            // A token endpoint answers; it does not send the subject token elsewhere.
            .redirect(redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| at("token_endpoint", &format!("cannot build the HTTP client: {e}")))?;
        let cache =
            moka::future::Cache::builder().max_capacity(config.cache_capacity).expire_after(UntilExpiry).build();
        Ok(Self {
            endpoint: endpoint.to_owned(),
            client_id: config.client_id.clone(),
            secret,
            method: config.client_auth_method,
            fields,
            timeout: Duration::from_millis(config.timeout_ms),
            client,
            cache,
            exchanges: AtomicU64::new(0),
        })
    }

    /// The `Authorization` header for this call's caller: from the cache, or from one
    /// exchange shared with the caller's concurrent calls. Bounded by the call's deadline.
    pub async fn authorization(&self, cx: &CallContext) -> Result<HeaderValue, ExchangeError> {
        let identity = cx.identity.as_ref();
        let Some((identity, subject_token)) = identity.and_then(|i| Some((i, i.subject_token()?))) else {
            return Err(ExchangeError::NoSubjectToken);
        };
        let key = cache_key(identity);
        let timeout = self.timeout.min(cx.remaining());
        let exchanged = self
            .cache
            .try_get_with(key, async {
                tokio::time::timeout(timeout, self.exchange(subject_token))
                    .await
                    .unwrap_or_else(|_| Err(self.failed(format!("no answer within {} ms", timeout.as_millis()))))
            })
            .await
            .map_err(|e| (*e).clone())?;
        Ok(exchanged.header.clone())
    }

    /// [`Self::authorization`], unless the call is cancelled first.
    pub async fn for_call(&self, cx: &CallContext) -> Result<Result<HeaderValue, ExchangeError>, AdapterError> {
        tokio::select! {
            biased;
            () = cx.cancel.cancelled() => Err(AdapterError::Cancelled),
            x = self.authorization(cx) => Ok(x),
        }
    }

    /// The upstream refused `refused`, this caller's exchanged token, with 401 (revoked, or
    /// its keys rotated, before it expired): it is dropped, so the next [`Self::authorization`]
    /// exchanges again (RFC 6750 § 3.1: the client may get a new token and retry). A token
    /// another call already replaced stays.
    pub async fn forget(&self, cx: &CallContext, refused: &HeaderValue) {
        let Some(identity) = cx.identity.as_ref() else { return };
        let key = cache_key(identity);
        if self.cache.get(&key).await.is_some_and(|e| e.header == *refused) {
            self.cache.invalidate(&key).await;
        }
    }

    /// Exchanges made so far (tests, metrics).
    pub fn exchanges(&self) -> u64 {
        self.exchanges.load(Ordering::Relaxed)
    }

    fn failed(&self, problem: impl Into<String>) -> ExchangeError {
        ExchangeError::Failed { endpoint: self.endpoint.clone(), problem: problem.into() }
    }

    /// One token request (RFC 8693 § 2.1) and its answer (§ 2.2).
    async fn exchange(&self, subject_token: &Secret) -> Result<Arc<Exchanged>, ExchangeError> {
        self.exchanges.fetch_add(1, Ordering::Relaxed);
        let body =
            format!("grant_type={}&subject_token={}{}", enc(GRANT_TYPE), enc(subject_token.expose_str()), self.fields);
        let mut request = self
            .client
            .post(&self.endpoint)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body);
        if self.method == ClientAuthMethod::ClientSecretBasic {
            // RFC 6749 § 2.3.1: both parts form-encoded before Base64.
            let pair = format!("{}:{}", enc(&self.client_id), enc(self.secret.expose_str()));
            let mut value =
                HeaderValue::from_str(&format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
                    .map_err(|_| self.failed("the client credentials cannot be sent in a header"))?;
            value.set_sensitive(true);
            request = request.header(AUTHORIZATION, value);
        }
        let started = Instant::now();
        let mut response =
            request.send().await.map_err(|e| self.failed(format!("unreachable: {}", e.without_url())))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|e| self.failed(format!("broken answer: {}", e.without_url())))?
        {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(self.failed(format!("answer longer than {MAX_ANSWER_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(match serde_json::from_slice::<OAuthError>(&body) {
                Ok(e) => ExchangeError::Refused {
                    endpoint: self.endpoint.clone(),
                    error: shorten(&redact(&e.error, subject_token)),
                    description: e.error_description.map(|d| shorten(&redact(&d, subject_token))),
                },
                Err(_) => self.failed(format!("HTTP {status} without an OAuth error")),
            });
        }
        let answer: Answer =
            serde_json::from_slice(&body).map_err(|e| self.failed(format!("not a token response: {e}")))?;
        if !(answer.token_type.eq_ignore_ascii_case("bearer") || answer.token_type.eq_ignore_ascii_case("n_a")) {
            return Err(self.failed(format!("token_type '{}' is not Bearer", shorten(&answer.token_type))));
        }
        if answer.access_token.is_empty() {
            return Err(self.failed("the access_token is empty"));
        }
        let mut header = HeaderValue::from_str(&format!("Bearer {}", answer.access_token))
            .map_err(|_| self.failed("the access_token cannot be sent in a header"))?;
        header.set_sensitive(true);
        let reuse_for =
            answer.expires_in.map_or(Duration::ZERO, |s| reuse_for(Duration::from_secs(s), started.elapsed()));
        Ok(Arc::new(Exchanged { header, reuse_for }))
    }
}

/// A caller's entry: the SHA-256 of its `issuer#subject`.
fn cache_key(identity: &mcp_adapter_api::Identity) -> [u8; 32] {
    ring::digest::digest(&ring::digest::SHA256, identity.key().as_bytes()).as_ref().try_into().expect("32-byte digest")
}

/// How long a token valid for `expires_in` (counted from the request, minus the round trip
/// `elapsed`) is reused: until a tenth of its life, at least 5 s and at most a minute, is
/// left, so a call never starts with a token about to expire. Zero: use it once.
fn reuse_for(expires_in: Duration, elapsed: Duration) -> Duration {
    let margin = (expires_in / 10).clamp(Duration::from_secs(5), Duration::from_secs(60));
    expires_in.saturating_sub(elapsed).saturating_sub(margin)
}

/// A successful answer (RFC 8693 § 2.2.1); `issued_token_type` is not needed.
#[derive(Deserialize)]
struct Answer {
    access_token: String,
    token_type: String,
    expires_in: Option<u64>,
}

/// An error answer (RFC 6749 § 5.2).
#[derive(Deserialize)]
struct OAuthError {
    error: String,
    error_description: Option<String>,
}

/// `application/x-www-form-urlencoded` of one value.
fn enc(v: &str) -> String {
    utf8_percent_encode(v, NON_ALPHANUMERIC).to_string()
}

/// An issuer's text with the subject token cut out, should it quote it.
fn redact(text: &str, token: &Secret) -> String {
    match token.expose_str() {
        "" => text.to_owned(),
        t => text.replace(t, "[redacted]"),
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_reused_until_shortly_before_they_expire() {
        let s = Duration::from_secs;
        assert_eq!(reuse_for(s(300), s(0)), s(270));
        assert_eq!(reuse_for(s(3600), s(1)), s(3600 - 1 - 60));
        assert_eq!(reuse_for(s(20), s(0)), s(15));
        assert_eq!(reuse_for(s(4), s(0)), Duration::ZERO, "too short to keep: used once");
    }

    #[test]
    fn config_problems_name_the_key() {
        let config = |v: serde_json::Value| serde_json::from_value::<TokenExchangeConfig>(v).unwrap();
        let env: Environment = [("S", "secret")].into_iter().collect();
        let problem = |v| TokenExchange::new(&config(v), "token_exchange", &env).unwrap_err();
        let base =
            serde_json::json!({"token_endpoint": "https://idp/token", "client_id": "c", "client_secret_env": "S"});
        assert_eq!(problem(base.clone()).key, "token_exchange");
        let mut bad = base.clone();
        bad["token_endpoint"] = "ftp://idp".into();
        bad["audience"] = "api".into();
        assert_eq!(problem(bad).key, "token_exchange.token_endpoint");
        let mut missing = base.clone();
        missing["client_secret_env"] = "NOPE".into();
        missing["audience"] = "api".into();
        assert_eq!(problem(missing).key, "token_exchange.client_secret_env");
        let mut ok = base;
        ok["audience"] = "api".into();
        let x = TokenExchange::new(&config(ok), "token_exchange", &env).unwrap();
        assert!(!format!("{x:?}").contains("secret"));
    }

    #[test]
    fn issuer_text_never_repeats_the_subject_token() {
        let token = Secret::new(b"eyJ.abc.def".to_vec());
        assert_eq!(redact("token eyJ.abc.def is expired", &token), "token [redacted] is expired");
        assert_eq!(shorten(&"x".repeat(400)).len(), MAX_DESCRIPTION_CHARS + 3);
    }
}
