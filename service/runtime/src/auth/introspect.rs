//! Opaque access tokens through RFC 7662 token introspection: the runtime asks the issuer's
//! introspection endpoint (authenticating with its own client credentials) and accepts an
//! `active` token whose `aud`, when present, names this server, and whose `iss`, when
//! present, is the configured issuer. The caller's [`super::Authenticator`] caches the answer by
//! the token's digest, never beyond the token's `exp`.

use base64::Engine as _;
use mcp_adapter_api::Identity;
use serde_json::{Map, Value};

use super::Rejection;
use crate::config::IntrospectionConfig;

/// One introspection endpoint.
pub struct Introspector {
    config: IntrospectionConfig,
    client: Option<reqwest::Client>,
}

impl Introspector {
    /// An introspector for `config`.
    pub fn new(config: IntrospectionConfig) -> Self {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| tracing::error!(endpoint = %config.endpoint, error = %e, "no HTTP client for introspection"))
            .ok();
        Self { config, client }
    }

    /// The caller and `exp` (seconds) of an active token, `Ok(None)` when this endpoint does not
    /// know it, or why it is refused.
    pub async fn introspect(&self, token: &str) -> Result<Option<(Identity, u64)>, Rejection> {
        let Some(client) = &self.client else { return Ok(None) };
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form(&self.config.client_id),
            form(self.config.client_secret.expose_str())
        ));
        let res = client
            .post(&self.config.endpoint)
            .header("authorization", format!("Basic {basic}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(format!("token={}&token_type_hint=access_token", form(token)))
            .send()
            .await;
        let answer: Map<String, Value> = match res {
            Ok(r) if r.status().is_success() => match r.json().await {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(endpoint = %self.config.endpoint, error = %e, "introspection answer is not JSON");
                    return Ok(None);
                }
            },
            Ok(r) => {
                tracing::warn!(endpoint = %self.config.endpoint, status = %r.status(), "introspection refused our request");
                return Ok(None);
            }
            Err(e) => {
                tracing::warn!(endpoint = %self.config.endpoint, error = %e, "introspection endpoint unreachable");
                return Ok(None);
            }
        };
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        if answer.get("iss").and_then(Value::as_str).is_some_and(|iss| iss != self.config.issuer) {
            return Err(Rejection::UntrustedIssuer);
        }
        let names_us = |v: &Value| v.as_str().is_some_and(|a| self.config.audiences.iter().any(|x| x == a));
        match answer.get("aud") {
            None => {}
            Some(Value::Array(auds)) if auds.iter().any(names_us) => {}
            Some(aud) if names_us(aud) => {}
            Some(_) => return Err(Rejection::WrongAudience),
        }
        let exp = answer.get("exp").and_then(Value::as_u64).ok_or_else(|| Rejection::MissingClaim("exp".into()))?;
        if exp.saturating_mul(1000) <= crate::clock::now_ms() {
            return Err(Rejection::Expired);
        }
        let subject = answer
            .get("sub")
            .or_else(|| answer.get("client_id"))
            .and_then(Value::as_str)
            .ok_or_else(|| Rejection::MissingClaim("sub".into()))?
            .to_owned();
        let scopes = super::jwt::scopes(&answer);
        Ok(Some((Identity::issued(&self.config.issuer, &subject, scopes, answer), exp)))
    }
}

/// `application/x-www-form-urlencoded` of one value (every byte but ASCII letters and digits escaped).
fn form(v: &str) -> String {
    percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
}
