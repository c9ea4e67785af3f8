//! The one reqwest client of an adapter: keep-alive pool, timeouts, fixed headers and the
//! credential, and a redirect policy that never leaves the upstream's origin.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, redirect};

use crate::config::{ConfigProblem, RestConfig};
use crate::request::check_header_name;

/// Builds the client for `config`; `credential` is the sensitive header from `[auth]`.
pub fn build(config: &RestConfig, credential: Option<(HeaderName, HeaderValue)>) -> Result<Client, ConfigProblem> {
    ensure_crypto_provider();
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let key = || format!("headers.{name}");
        let name =
            check_header_name(name, credential.as_ref().map(|(n, _)| n)).map_err(|p| ConfigProblem::new(key(), p))?;
        let value = HeaderValue::from_str(value).map_err(|_| ConfigProblem::new(key(), "not a valid header value"))?;
        headers.insert(name, value);
    }
    if let Some((name, value)) = credential {
        headers.insert(name, value);
    }
    let user_agent = HeaderValue::from_str(&config.user_agent)
        .map_err(|_| ConfigProblem::new("user_agent", "not a valid header value"))?;
    if config.connect_timeout_ms == 0 {
        return Err(ConfigProblem::new("connect_timeout_ms", "must be at least 1"));
    }
    Client::builder()
        .default_headers(headers)
        .user_agent(user_agent)
        .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
        .pool_idle_timeout(Duration::from_millis(config.pool.idle_timeout_ms))
        .pool_max_idle_per_host(config.pool.max_idle_per_host)
        // Small request/response exchanges: do not wait for Nagle.
        .tcp_nodelay(true)
        // No proxy from the environment: where requests go is decided by the config alone.
        .no_proxy()
        .redirect(same_origin(config.max_redirects))
        .build()
        .map_err(|e| ConfigProblem::new("base_urls", format!("cannot build the HTTP client: {e}")))
}

/// Follows at most `max` redirects, and only to the same scheme, host and port as the
/// request: a redirect elsewhere is returned as the answer (and becomes a tool error), so
/// credentials and arguments never reach a host the config did not name.
pub fn same_origin(max: usize) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        let Some(first) = attempt.previous().first() else { return attempt.stop() };
        let next = attempt.url();
        let same = next.scheme() == first.scheme()
            && next.host_str() == first.host_str()
            && next.port_or_known_default() == first.port_or_known_default();
        if same && attempt.previous().len() <= max { attempt.follow() } else { attempt.stop() }
    })
}

/// reqwest is built with `rustls-no-provider`: TLS uses the process-wide provider, which the
/// runtime installs at start-up (ring). Library users, tests and benches get the same one
/// here instead of a panic on the first client.
pub fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race with another installer is fine: a provider is then installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
