//! The checks of one JWT access token (RFC 9068, RFC 7519, RFC 8725): issuer chosen by the
//! exact `iss`, key by `kid` from that issuer's set only (`jku`, `x5u`, `jwk` and `x5c`
//! headers are never followed), algorithm from the key, then signature, `iss`, `aud`
//! (RFC 8707: this server's resource), `exp` and `nbf` with the configured leeway.

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
    let iss = unverified_issuer(token)?;
    let issuer = issuers.iter().find(|i| i.config.issuer == iss).ok_or(Rejection::UntrustedIssuer)?;
    let key = issuer.key(header.kid.as_deref()).await.ok_or(Rejection::UnknownKey)?;
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
    let subject = claims.get("sub").and_then(Value::as_str).ok_or_else(|| Rejection::MissingClaim("sub".into()))?;
    let exp = claims.get("exp").and_then(Value::as_u64).ok_or_else(|| Rejection::MissingClaim("exp".into()))?;
    let identity = Identity::issued(&issuer.config.issuer, subject, scopes(&claims), claims.clone());
    Ok((identity, exp))
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
