//! Who is calling (MCP 2026-07-28 basic/authorization; OAuth 2.1 resource server): one
//! [`Authenticator`] per configuration load turns a bearer token into an [`Identity`] or a
//! precise [`Rejection`]. Static tokens are looked up by SHA-256 digest; JWT access tokens
//! (RFC 9068 profile accepted, not required) are verified against their issuer's key set
//! ([`jwks`]), and a token once verified is served from a cache keyed by the token itself until its
//! `exp`, so a client reusing its token pays one lookup per request (no digest), and on the
//! thread that saw it last a comparison of bytes (`recent`).
//!
//! - [`jwks`]: one trusted issuer: discovery, key set cache, background and unknown-`kid` refresh.
//! - `introspect`: opaque tokens through RFC 7662 introspection.
//! - `recent`: each worker thread's last verified tokens, the hot path.
//! - `jwt`: the checks of one JWT (signature with the key's algorithm, `iss`, `aud`, `exp`, `nbf`).
//! - [`policy`]: access rules per tool, prompt and resource.

mod introspect;
pub mod jwks;
mod jwt;
pub mod policy;
mod recent;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_adapter_api::Identity;

use crate::clock;
use crate::config::AuthConfig;

/// Longest bearer token considered; longer ones are refused before any decoding.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Why a request was not authenticated. Each names what the caller should fix; none carries
/// the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// No `Authorization: Bearer` header.
    #[error("no bearer token: send Authorization: Bearer <token>")]
    Missing,
    /// The token came in the URL, which leaks it to logs (MCP 2026-07-28 basic/authorization § Token Requirements).
    #[error("access tokens in the query string are not accepted: send Authorization: Bearer <token>")]
    InQuery,
    /// Longer than [`MAX_TOKEN_BYTES`].
    #[error("the token is longer than {MAX_TOKEN_BYTES} bytes")]
    TooLong,
    /// Not a JWT and not a known static token.
    #[error("the token is not known to this server")]
    Unknown,
    /// A JWT whose structure, header, claims or encoding is broken.
    #[error("malformed token: {0}")]
    Malformed(&'static str),
    /// `iss` names no configured issuer.
    #[error("the token's issuer is not trusted by this server")]
    UntrustedIssuer,
    /// The `kid` is not in the issuer's key set (after a refresh, when one was allowed).
    #[error("the token is signed with a key its issuer does not publish")]
    UnknownKey,
    /// The `kid` is not among the keys known, and the issuer's key set cannot be fetched now.
    #[error("the token's issuer did not give its keys (its key set could not be fetched); try again shortly")]
    KeysUnavailable,
    /// The header's `alg` is not the algorithm of the key.
    #[error("the token's algorithm does not match its key")]
    WrongAlgorithm,
    /// The signature does not verify.
    #[error("the token's signature does not verify")]
    BadSignature,
    /// `exp` has passed.
    #[error("the token has expired")]
    Expired,
    /// `nbf` is in the future.
    #[error("the token is not valid yet")]
    NotYetValid,
    /// `aud` does not name this server (RFC 8707).
    #[error("the token is not meant for this server (aud)")]
    WrongAudience,
    /// `aud` names only another virtual endpoint of this server (its own resource).
    #[error("the token is meant for another endpoint of this server (aud): ask for one with this endpoint's resource")]
    OtherEndpoint,
    /// A required claim is missing.
    #[error("the token lacks a required claim ({0})")]
    MissingClaim(String),
    /// The JOSE header lists extensions in `crit`, which this server does not understand
    /// (RFC 7515 §4.1.11: the token MUST then be rejected).
    #[error("the token's header requires extensions this server does not understand (crit: {0})")]
    CriticalExtension(String),
    /// `iat` lies in the future beyond the leeway: the issuer's clock or the token is wrong.
    #[error("the token claims to be issued in the future (iat)")]
    IssuedInFuture,
    /// More than one `Authorization` header: which credential counts would be a guess
    /// (RFC 6750 §3.1 `invalid_request`, answered with 400).
    #[error("more than one Authorization header: send exactly one")]
    Ambiguous,
}

impl Rejection {
    /// A short stable label for logs and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::InQuery => "in_query",
            Self::TooLong => "too_long",
            Self::Unknown => "unknown",
            Self::Malformed(_) => "malformed",
            Self::UntrustedIssuer => "untrusted_issuer",
            Self::UnknownKey => "unknown_key",
            Self::KeysUnavailable => "keys_unavailable",
            Self::WrongAlgorithm => "wrong_algorithm",
            Self::BadSignature => "bad_signature",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::WrongAudience => "wrong_audience",
            Self::OtherEndpoint => "other_endpoint",
            Self::MissingClaim(_) => "missing_claim",
            Self::CriticalExtension(_) => "critical_extension",
            Self::IssuedInFuture => "issued_in_future",
            Self::Ambiguous => "ambiguous",
        }
    }

    /// True when the caller sent a token (the challenge then says `error="invalid_token"`, RFC 6750 §3.1).
    pub fn had_token(&self) -> bool {
        !matches!(self, Self::Missing)
    }
}

/// A verified token: its caller and until when the verdict holds.
#[derive(Debug)]
struct Verified {
    identity: Identity,
    /// `exp` in Unix milliseconds (`u64::MAX` for static tokens).
    until_ms: u64,
    /// The same on the monotonic clock, for [`Authenticator::recent`]: a request's own clock
    /// read then decides, no second read of the wall clock.
    until: Instant,
}

impl Verified {
    /// The verdict for `identity` until `until_ms` (Unix ms), `now_ms` being now.
    fn new(identity: Identity, until_ms: u64, now_ms: u64) -> Self {
        let left = Duration::from_millis(until_ms.saturating_sub(now_ms));
        let now = Instant::now();
        // A static token's `u64::MAX` is a century here: `Instant` has no "never".
        let until = now.checked_add(left).unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400));
        Self { identity, until_ms, until }
    }
}

/// The validator of one configuration load.
pub struct Authenticator {
    config: Arc<AuthConfig>,
    issuers: Vec<Arc<jwks::Issuer>>,
    introspectors: Vec<introspect::Introspector>,
    verified: moka::sync::Cache<Arc<str>, Arc<Verified>>,
    /// This load's number in the threads' `recent` tokens.
    load: u64,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("issuers", &self.issuers.len()).finish_non_exhaustive()
    }
}

impl Authenticator {
    /// Builds the validator and starts each issuer's key-set refresh (stops when dropped).
    pub fn new(config: AuthConfig) -> Self {
        let issuers = config.issuers.iter().map(|i| jwks::Issuer::start(i.clone())).collect();
        // The synchronous cache: a hit is the hot path of every authenticated request.
        let verified = moka::sync::Cache::builder()
            .max_capacity(100_000)
            // An upper bound only: every hit is checked against the token's own `exp`.
            .time_to_live(Duration::from_secs(3600))
            .build();
        let introspectors = config.introspection.iter().cloned().map(introspect::Introspector::new).collect();
        Self { config: Arc::new(config), issuers, introspectors, verified, load: recent::next_load() }
    }

    /// The configuration it was built from (challenges, metadata, access rules).
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The caller of a token this thread verified or found lately, while its verdict holds
    /// at `now` (the request's arrival): the hot path, synchronous ([`Self::authenticate`]
    /// does the rest).
    pub fn recent(&self, token: &[u8], now: Instant) -> Option<Identity> {
        let identity = recent::find(self.load, token, |v| (now < v.until).then(|| v.identity.clone()))?;
        if identity.is_none() {
            recent::forget(self.load, token);
        }
        identity
    }

    /// The caller a bearer token proves, or why not.
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Identity, Rejection> {
        let token = token.ok_or(Rejection::Missing)?;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::TooLong);
        }
        if let Some(identity) = self.recent(token.as_bytes(), Instant::now()) {
            return Ok(identity);
        }
        // A token already verified is found by its own text (no digest); the cache holds only
        // issuer-verified tokens, so a static token is looked up after it.
        let now = clock::now_ms();
        if let Some(v) = self.verified.get(token) {
            if now < v.until_ms {
                recent::remember(self.load, token, &v);
                return Ok(v.identity.clone());
            }
            self.verified.invalidate(token);
        }
        let digest: [u8; 32] =
            ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref().try_into().expect("32-byte digest");
        if let Some(subject) = self.config.tokens.get(&digest) {
            return Ok(Identity::new(Arc::clone(subject)));
        }
        let (identity, exp) = if !self.issuers.is_empty() && token.bytes().filter(|b| *b == b'.').count() == 2 {
            jwt::verify(token, &self.issuers, self.config.leeway).await?
        } else {
            self.introspect(token).await?
        };
        // The token travels with its caller (an adapter may exchange it, RFC 8693). Cached with
        // the verdict: the entry already holds the token's claims, and a hit stays one clone.
        let identity = identity.with_subject_token(token);
        // The leeway that admitted it must not stretch the cached verdict past `exp`.
        let until_ms = exp.saturating_mul(1000);
        if now < until_ms {
            let verdict = Arc::new(Verified::new(identity.clone(), until_ms, now));
            recent::remember(self.load, token, &verdict);
            self.verified.insert(Arc::from(token), verdict);
        }
        Ok(identity)
    }

    /// The first introspection endpoint that knows the token as active.
    async fn introspect(&self, token: &str) -> Result<(Identity, u64), Rejection> {
        for i in &self.introspectors {
            if let Some(found) = i.introspect(token).await? {
                return Ok(found);
            }
        }
        Err(Rejection::Unknown)
    }

    /// Key-set fetches so far, per issuer (tests and metrics).
    pub fn jwks_fetches(&self) -> u64 {
        self.issuers.iter().map(|i| i.fetches()).sum()
    }
}
