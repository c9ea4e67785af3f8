//! Execution: one call's attempts against the pool, each in an `http.client` span carrying
//! the caller's W3C trace context. Retries (backon) use exponential backoff with full jitter,
//! honour `Retry-After`, and never outlive the call's deadline:
//!
//! - connect failures go to another upstream at once, for every method: the request never
//!   left, so re-sending it elsewhere does not repeat it;
//! - 429, 502, 503, 504 and broken connections are retried only for idempotent requests
//!   (GET, HEAD, PUT, DELETE, OPTIONS, or a tool marked `idempotent = true`). A POST that
//!   reached an upstream is never sent twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use backon::{ExponentialBuilder, Retryable as _};
use bytes::{Bytes, BytesMut};
use mcp_adapter_api::{AdapterError, CallContext};
use reqwest::header::{CONTENT_TYPE, LOCATION, RETRY_AFTER};
use reqwest::{Client, Method, Response, StatusCode};
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::config::RetryConfig;
use crate::pool::Pool;
use crate::request::{Plan, Prepared};

/// The final answer of an upstream, body read up to the cap.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: StatusCode,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// `Location` of a redirect that was not followed.
    pub location: Option<String>,
    /// `Retry-After`, when present and parseable.
    pub retry_after: Option<Duration>,
    /// The body (at most `max_response_bytes`).
    pub body: Bytes,
    /// True when the body was longer than the cap.
    pub truncated: bool,
}

/// Why an attempt did not produce a final answer.
#[derive(Debug)]
enum Failed {
    /// No connection (refused, DNS, TLS handshake, connect timeout): nothing was sent.
    Connect(reqwest::Error),
    /// The exchange broke after the request may have been sent.
    Transport(reqwest::Error),
    /// The call's deadline passed.
    Timeout,
    /// The attempt took `retry.attempt_timeout_ms` (a hung upstream); the request may have
    /// been sent, so only idempotent requests are retried, on another upstream.
    AttemptTimeout,
    /// The request could not be built (a bug: parts were validated at load).
    Invalid(reqwest::Error),
    /// 429, 502, 503 or 504: retryable when the request is idempotent.
    Status(Reply),
}

impl Failed {
    fn retryable(&self, idempotent: bool) -> bool {
        match self {
            Self::Connect(_) => true,
            Self::Transport(_) | Self::Status(_) | Self::AttemptTimeout => idempotent,
            Self::Timeout | Self::Invalid(_) => false,
        }
    }
}

/// Sends calls to a pool through one client: the adapter's own pool, or the pool of the
/// plan's own server ([`Plan::pool`]: an OpenAPI operation that names its `servers`).
#[derive(Debug)]
pub struct Executor {
    client: Client,
    /// The adapter's `base_urls` first, then one pool per server of a plan.
    pools: Vec<Arc<Pool>>,
    backoff: ExponentialBuilder,
    attempt_timeout: Duration,
    max_response_bytes: usize,
}

impl Executor {
    /// The pool's upstreams as the operator console shows them.
    pub fn status(&self) -> Vec<mcp_adapter_api::Backend> {
        self.pools.iter().flat_map(|p| p.status()).collect()
    }

    /// An executor; `pools[0]` is the adapter's, `retry.max_attempts` counts the first attempt.
    pub fn new(client: Client, pools: Vec<Arc<Pool>>, retry: &RetryConfig, max_response_bytes: usize) -> Self {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(retry.initial_backoff_ms))
            .with_max_delay(Duration::from_millis(retry.max_backoff_ms.max(retry.initial_backoff_ms)))
            .with_factor(2.0)
            .with_max_times(retry.max_attempts.saturating_sub(1));
        let attempt_timeout = Duration::from_millis(retry.attempt_timeout_ms);
        Self { client, pools, backoff, attempt_timeout, max_response_bytes }
    }

    /// The pools the attempts go to, the adapter's first.
    pub fn pools(&self) -> &[Arc<Pool>] {
        &self.pools
    }

    /// Runs `req` with retries; the reply of the last attempt is the answer.
    pub async fn run(&self, plan: &Plan, req: &Prepared, cx: &CallContext) -> Result<Reply, AdapterError> {
        let budget = cx.remaining();
        let previous = AtomicUsize::new(usize::MAX);
        let attempts = AtomicUsize::new(0);
        let deadline = cx.deadline;
        let pool = self.pools.get(plan.pool).unwrap_or(&self.pools[0]);
        let outcome = (|| self.attempt(pool, plan, req, cx, &previous, &attempts))
            .retry(self.backoff)
            .sleep(tokio::time::sleep)
            .when(|f: &Failed| f.retryable(plan.idempotent))
            .adjust(|f, backoff| delay(f, backoff?, deadline, pool.count() > 1))
            .notify(|f, wait| {
                // Counted against the upstream the failed attempt went to.
                pool.retried(previous.load(Ordering::Relaxed));
                tracing::debug!(error = ?f, wait_ms = wait.as_millis() as u64, "retrying upstream request");
            })
            .await;
        let tried = attempts.load(Ordering::Relaxed);
        // The upstream of the last attempt, by its base URL (which never carries credentials:
        // `base_urls` refuses them), so whoever reads the error knows where to look.
        let at = pool.base(previous.load(Ordering::Relaxed)).unwrap_or("the upstream");
        let times = if tried == 1 { "1 attempt".to_owned() } else { format!("{tried} attempts") };
        match outcome {
            Ok(reply) | Err(Failed::Status(reply)) => Ok(reply),
            Err(Failed::Connect(e)) => {
                Err(AdapterError::Backend(format!("{at} unreachable ({times}): {}", describe(e))))
            }
            Err(Failed::Transport(e)) => {
                Err(AdapterError::Backend(format!("request to {at} failed ({times}): {}", describe(e))))
            }
            Err(Failed::Timeout) => Err(AdapterError::Timeout(budget)),
            Err(Failed::AttemptTimeout) => Err(AdapterError::Backend(format!(
                "{at} did not answer within retry.attempt_timeout_ms ({} ms; {times})",
                self.attempt_timeout.as_millis()
            ))),
            Err(Failed::Invalid(e)) => Err(AdapterError::Internal(format!("cannot build the request: {e}"))),
        }
    }

    /// One attempt on the next upstream.
    async fn attempt(
        &self,
        pool: &Pool,
        plan: &Plan,
        req: &Prepared,
        cx: &CallContext,
        previous: &AtomicUsize,
        attempts: &AtomicUsize,
    ) -> Result<Reply, Failed> {
        let before = previous.load(Ordering::Relaxed);
        let i = pool.pick((before != usize::MAX).then_some(before));
        previous.store(i, Ordering::Relaxed);
        let resend_count = attempts.fetch_add(1, Ordering::Relaxed);
        let upstream = pool.get(i);
        let path = req.path_and_query.split('?').next().unwrap_or_default();
        let span = tracing::info_span!(
            "http.client",
            otel.kind = "client",
            http.request.method = %plan.method,
            server.address = %upstream.host,
            server.port = upstream.port,
            url.path = path,
            http.request.resend_count = resend_count,
            http.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let remaining = cx.remaining();
        if remaining.is_zero() {
            return Err(Failed::Timeout);
        }
        // Each attempt gets at most `attempt_timeout`, so a hung upstream cannot take the
        // whole budget: the rest is left for a retry elsewhere.
        let cut_by_attempt = self.attempt_timeout < remaining;
        let mut builder = self
            .client
            .request(plan.method.clone(), format!("{}{}", upstream.base, req.path_and_query))
            .headers(req.headers.clone())
            .timeout(self.attempt_timeout.min(remaining));
        for (name, value) in &cx.propagation {
            builder = builder.header(*name, value.as_str());
        }
        if let Some(body) = &req.body {
            builder = builder.body(body.clone());
        }
        let exchange = async {
            let response = builder.send().await.map_err(|e| failed(pool, i, e, cut_by_attempt))?;
            let status = response.status();
            tracing::Span::current().record("http.response.status_code", status.as_u16());
            // 429 says nothing about the upstream's health either way.
            if status.is_server_error() {
                pool.failure(i);
            } else if status != StatusCode::TOO_MANY_REQUESTS {
                pool.success(i);
            }
            let reply = read(response, plan.method == Method::HEAD, self.max_response_bytes)
                .await
                .map_err(|e| failed(pool, i, e, cut_by_attempt))?;
            match status.as_u16() {
                429 | 502 | 503 | 504 => Err(Failed::Status(reply)),
                _ => Ok(reply),
            }
        };
        let result = exchange.instrument(span.clone()).await;
        if let Err(f) = &result {
            span.record("error.type", kind(f));
        }
        result
    }
}

/// Classifies a reqwest error and counts it against upstream `i` of `pool` when it is the
/// upstream's. A timeout counts too: an upstream that accepts and never answers is failing,
/// and would otherwise stay in rotation forever (without a health check).
fn failed(pool: &Pool, i: usize, e: reqwest::Error, cut_by_attempt: bool) -> Failed {
    if e.is_builder() {
        return Failed::Invalid(e);
    }
    if e.is_timeout() && !e.is_connect() {
        pool.failure(i);
        return if cut_by_attempt { Failed::AttemptTimeout } else { Failed::Timeout };
    }
    pool.failure(i);
    if e.is_connect() { Failed::Connect(e) } else { Failed::Transport(e) }
}

/// The wait before the next attempt, or `None` to stop: with other upstreams to try, a
/// connect failure moves on at once; `Retry-After` is honoured; otherwise full jitter over
/// the exponential step. A wait that would end past the deadline stops instead: the last
/// answer is returned while there is still time to deliver it.
fn delay(failed: &Failed, backoff: Duration, deadline: Instant, elsewhere: bool) -> Option<Duration> {
    let wait = match failed {
        // Nothing was sent, or the upstream hung: another one is tried at once.
        Failed::Connect(_) | Failed::AttemptTimeout if elsewhere => Duration::ZERO,
        Failed::Status(Reply { retry_after: Some(after), .. }) => *after,
        _ => backoff.mul_f64(fastrand::f64()),
    };
    // `wait` may come from the upstream (`Retry-After: 18446744073709551615`): `Instant + Duration`
    // panics on overflow, so the sum is checked; a wait past any representable instant is past
    // the deadline too.
    Instant::now().checked_add(wait).is_some_and(|end| end < deadline).then_some(wait)
}

fn kind(f: &Failed) -> &'static str {
    match f {
        Failed::Connect(_) => "connect",
        Failed::Transport(_) => "transport",
        Failed::Timeout => "timeout",
        Failed::AttemptTimeout => "attempt_timeout",
        Failed::Invalid(_) => "invalid_request",
        Failed::Status(_) => "retryable_status",
    }
}

/// A reqwest error for the model, without the URL (it names the upstream host, which is
/// configuration, not the caller's business) and with its causes.
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Reads status, headers and at most `cap` body bytes.
async fn read(mut response: Response, head: bool, cap: usize) -> Result<Reply, reqwest::Error> {
    let header = |name| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let content_type = header(CONTENT_TYPE);
    let location = header(LOCATION);
    let retry_after = header(RETRY_AFTER).and_then(|v| retry_after(&v, SystemTime::now()));
    let status = response.status();
    let (body, truncated) = if head { (Bytes::new(), false) } else { read_capped(&mut response, cap).await? };
    Ok(Reply { status, content_type, location, retry_after, body, truncated })
}

/// The body up to `cap` bytes; the common one-chunk body is not copied.
async fn read_capped(response: &mut Response, cap: usize) -> Result<(Bytes, bool), reqwest::Error> {
    let Some(first) = response.chunk().await? else { return Ok((Bytes::new(), false)) };
    if first.len() > cap {
        return Ok((first.slice(..cap), true));
    }
    let Some(second) = response.chunk().await? else { return Ok((first, false)) };
    let mut buf = BytesMut::with_capacity((first.len() + second.len()).max(8 * 1024).min(cap));
    let mut next = Some(second);
    buf.extend_from_slice(&first);
    while let Some(chunk) = next {
        let room = cap - buf.len();
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            return Ok((buf.freeze(), true));
        }
        buf.extend_from_slice(&chunk);
        next = response.chunk().await?;
    }
    Ok((buf.freeze(), false))
}

/// The longest `Retry-After` taken from an upstream: a day. The value comes from outside and
/// is only ever compared with the call's deadline, so capping it changes no decision, but keeps
/// every later `Instant`/`SystemTime` arithmetic on it far from overflow.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), capped at
/// [`MAX_RETRY_AFTER`]; delay-seconds is "a non-negative decimal integer" of any length.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO).min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(retry_after("3", now), Some(Duration::from_secs(3)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(5));
        assert_eq!(retry_after(&later, now), Some(Duration::from_secs(5)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(5));
        assert_eq!(retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(retry_after("soon", now), None);
        // From outside: capped, never an overflow later.
        let day = Some(MAX_RETRY_AFTER);
        assert_eq!(retry_after("18446744073709551615", now), day);
        assert_eq!(retry_after("99999999999999999999999", now), day);
        assert_eq!(retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now), day);
    }

    #[tokio::test]
    async fn huge_waits_stop_instead_of_overflowing() {
        let deadline = Instant::now() + Duration::from_secs(10);
        for secs in [u64::MAX, i64::MAX as u64] {
            assert_eq!(delay(&status(Some(Duration::from_secs(secs))), Duration::ZERO, deadline, true), None);
        }
    }

    fn status(retry_after: Option<Duration>) -> Failed {
        Failed::Status(Reply {
            status: StatusCode::SERVICE_UNAVAILABLE,
            content_type: None,
            location: None,
            retry_after,
            body: Bytes::new(),
            truncated: false,
        })
    }

    #[tokio::test(start_paused = true)]
    async fn delays_are_jittered_honour_retry_after_and_respect_the_deadline() {
        let deadline = Instant::now() + Duration::from_secs(10);
        let step = Duration::from_millis(400);
        for _ in 0..100 {
            let d = delay(&status(None), step, deadline, true).unwrap();
            assert!(d <= step, "full jitter stays within the step: {d:?}");
        }
        assert_eq!(delay(&status(Some(Duration::from_secs(2))), step, deadline, true), Some(Duration::from_secs(2)));
        assert_eq!(
            delay(&status(Some(Duration::from_secs(11))), step, deadline, true),
            None,
            "past the deadline: stop"
        );
        assert!(!status(None).retryable(false), "a non-idempotent request is not retried on 503");
        assert!(status(None).retryable(true));
        assert!(!Failed::Timeout.retryable(true));
    }
}
