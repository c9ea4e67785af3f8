//! The checks of one JWT access token (RFC 9068, RFC 7519, RFC 8725): issuer chosen by the
//! exact `iss`, key by `kid` from that issuer's set only (`jku`, `x5u`, `jwk` and `x5c`
//! headers are never followed), algorithm from the key, no `crit` extension (RFC 7515
//! §4.1.11), then signature, `iss`, `aud` (RFC 8707: this server's resource), `exp`, `nbf`
//! and `iat` (not in the future) with the configured leeway.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Validation, decode, decode_header};
use mcp_adapter_api::Identity;
use serde_json::{Map, Value};

use super::Rejection;
use super::jwks::Issuer;

/// Verifies `token` (three dot-separated parts) and returns its caller and `exp` (seconds).
pub(super) async fn verify(
    token: &str,
    issuers: &[Arc<Issuer>],
    leeway: Duration,
) -> Result<(Identity, u64), Rejection> {
    let header =
        decode_header(token).map_err(|_| Rejection::Malformed("the JOSE header is not a supported JWS header"))?;
    critical_extensions(token)?;
    let iss = unverified_issuer(token)?;
    let issuer = issuers.iter().find(|i| i.config.issuer == iss).ok_or(Rejection::UntrustedIssuer)?;
    let key = issuer.key(header.kid.as_deref()).await?;
    if !key.algorithms.contains(&header.alg) {
        return Err(Rejection::WrongAlgorithm);
    }
    let mut validation = Validation::new(header.alg);
    validation.algorithms = key.algorithms.clone();
    validation.leeway = leeway.as_secs();
    validation.validate_nbf = true;
    validation.set_issuer(&[&issuer.config.issuer]);
    validation.set_audience(&issuer.config.audiences);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let claims =
        decode::<Map<String, Value>>(token, &key.decoding, &validation).map_err(|e| rejection(e.kind()))?.claims;
    // `iat` is optional (RFC 7519 §4.1.6), but one in the future is a wrong clock or a
    // forged token (RFC 8725 §3.10's care for time claims): refuse it beyond the leeway.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if claims.get("iat").and_then(Value::as_f64).is_some_and(|iat| iat > (now + leeway.as_secs()) as f64) {
        return Err(Rejection::IssuedInFuture);
    }
    let subject = claims.get("sub").and_then(Value::as_str).ok_or_else(|| Rejection::MissingClaim("sub".into()))?;
    let exp = claims.get("exp").and_then(Value::as_u64).ok_or_else(|| Rejection::MissingClaim("exp".into()))?;
    let identity = Identity::issued(&issuer.config.issuer, subject, scopes(&claims), claims.clone());
    Ok((identity, exp))
}

/// RFC 7515 §4.1.11: a header's `crit` lists extensions the recipient must understand, else
/// reject the token. This server understands none (and `crit` may not be empty), so any
/// `crit` is refused. The header type of the JWT library does not keep `crit`: read it here.
fn critical_extensions(token: &str) -> Result<(), Rejection> {
    let head = token.split('.').next().unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .map_err(|_| Rejection::Malformed("the JOSE header is not base64url"))?;
    let header: Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|_| Rejection::Malformed("the JOSE header is not a JSON object"))?;
    match header.get("crit") {
        None => Ok(()),
        Some(crit) => Err(Rejection::CriticalExtension(crit.to_string())),
    }
}

/// `iss` read before the signature is checked, only to choose the issuer whose keys check it.
fn unverified_issuer(token: &str) -> Result<String, Rejection> {
    #[derive(serde::Deserialize)]
    struct Iss {
        iss: Option<String>,
    }
    let payload = token.split('.').nth(1).ok_or(Rejection::Malformed("not three parts"))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| Rejection::Malformed("the payload is not base64url"))?;
    let claims: Iss =
        serde_json::from_slice(&bytes).map_err(|_| Rejection::Malformed("the payload is not a JSON object"))?;
    claims.iss.ok_or_else(|| Rejection::MissingClaim("iss".into()))
}

/// Granted scopes: `scope` (RFC 9068 §2.2.3, space-separated), else `scp` (Entra ID: a
/// space-separated string; Okta: an array).
pub(super) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn rejection(kind: &ErrorKind) -> Rejection {
    match kind {
        ErrorKind::ExpiredSignature => Rejection::Expired,
        ErrorKind::ImmatureSignature => Rejection::NotYetValid,
        ErrorKind::InvalidAudience => Rejection::WrongAudience,
        ErrorKind::InvalidIssuer => Rejection::UntrustedIssuer,
        ErrorKind::InvalidSignature => Rejection::BadSignature,
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName | ErrorKind::MissingAlgorithm => {
            Rejection::WrongAlgorithm
        }
        ErrorKind::MissingRequiredClaim(c) => Rejection::MissingClaim(c.clone()),
        ErrorKind::InvalidToken => Rejection::Malformed("not a JWS in compact form"),
        ErrorKind::Base64(_) => Rejection::Malformed("a part is not base64url"),
        ErrorKind::Json(_) | ErrorKind::Utf8(_) => Rejection::Malformed("the claims are not a JSON object"),
        ErrorKind::InvalidSubject => Rejection::MissingClaim("sub".into()),
        _ => Rejection::BadSignature,
    }
}
