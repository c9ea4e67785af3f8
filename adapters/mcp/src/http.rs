//! Remote upstreams over Streamable HTTP: a modern (2026-07-28) server is stateless, every
//! request carries its envelope (MCP 2026-07-28 basic/transports/streamable-http); a 2025-era
//! server gets `initialize` first, and the session it hands out is held here and started
//! again when the server forgets it (404, MCP 2025-11-25 basic/transports § Session
//! Management). The client is the REST adapter's kind of client: one keep-alive pool,
//! timeouts, the credential as a sensitive header, redirects only within the origin.
//!
//! With `token_exchange`, a call carries its caller's exchanged token ([`CallerCredential`])
//! instead of the service credential. A 2025-era server binds its session to whoever opened
//! it (MCP 2025-11-25 basic/security_best_practices § Session Hijacking), so such a call goes
//! in a session of the caller's own, opened with the caller's token and kept per caller.
//!
//! - `session`: connecting, the adapter's session and the callers' own;
//! - `watch`: following the upstream's list changes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use futures_util::stream::BoxStream;
use mcp_adapter_api::protocol::ErrorObject;
use mcp_adapter_api::protocol::headers::encode_value;
use mcp_adapter_api::{ConfigProblem, Environment};
use mcp_adapter_rest::token_exchange::TokenExchange;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use serde_json::{Map, Value, json};

use crate::config::{McpConfig, Protocol};
use crate::exchange::{Flight, UpstreamError};
use crate::sse::SseReader;
use crate::wire::{self, Dialect, Incoming};

mod session;
mod watch;

pub use session::{CallerCredential, Session};

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// A caller's own session unused this long is dropped (opened again on its next call).
const CALLER_SESSION_IDLE: Duration = Duration::from_secs(600);
/// Callers' own sessions kept at once when calls carry each caller's own token (`user_auth`;
/// `token_exchange` names its own `cache_capacity`).
const CALLER_SESSIONS: u64 = 10_000;

/// One remote upstream: its client and, once connected, its session.
#[derive(Debug)]
pub struct Http {
    client: Client,
    url: Url,
    protocol: Protocol,
    session: ArcSwapOption<Session>,
    connecting: tokio::sync::Mutex<()>,
    /// `token_exchange`: the caller's token for its calls.
    exchange: Option<Arc<TokenExchange>>,
    /// Sessions opened as a caller, by caller key: 2025-era ones (`token_exchange`,
    /// `user_auth`), and with [`Self::only_callers`] every caller's.
    callers: moka::future::Cache<Arc<str>, Arc<Session>>,
    /// No service credential and calls as each caller (`user_auth` without `auth`): nothing
    /// is asked without a caller's credential, the handshake included.
    only_callers: bool,
    next_id: AtomicU64,
    max_message_bytes: usize,
    request_timeout: Duration,
}

/// One request to send.
#[derive(Debug)]
pub struct Outgoing<'a> {
    /// The method.
    pub method: &'a str,
    /// Its params, without the envelope.
    pub params: Map<String, Value>,
    /// The caller's client capabilities (the modern envelope carries them).
    pub capabilities: &'a Value,
    /// Ask for progress notifications.
    pub progress: bool,
    /// `Mcp-Param-*` headers of the tool's `x-mcp-header` arguments.
    pub param_headers: Vec<(String, String)>,
    /// W3C trace context.
    pub propagation: &'a [(&'static str, String)],
    /// The caller's own credential (`token_exchange`); `None`: the service credential.
    pub credential: Option<CallerCredential>,
}

impl Http {
    /// Validates the HTTP part of `config` and builds the client.
    /// The client of `config`'s upstream at `url`; `per_caller` when calls carry each caller's
    /// own token (`user_auth`), which a 2025-era server binds its sessions to (and, without
    /// `auth`, every server its handshake).
    pub fn build(config: &McpConfig, url: &str, env: &Environment, per_caller: bool) -> Result<Self, ConfigProblem> {
        let parsed = Url::parse(url).map_err(|e| ConfigProblem::new("url", format!("'{url}' is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.username().is_empty() || parsed.password().is_some()
        {
            return Err(ConfigProblem::new("url", "must be an http(s) URL without credentials (use `auth`)"));
        }
        mcp_adapter_rest::client::ensure_crypto_provider();
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let key = || format!("headers.{name}");
            let name =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| ConfigProblem::new(key(), "not a header name"))?;
            let value =
                HeaderValue::from_str(value).map_err(|_| ConfigProblem::new(key(), "not a valid header value"))?;
            headers.insert(name, value);
        }
        if let Some(auth) = &config.auth {
            let (name, value) = mcp_adapter_rest::auth::header(auth, env)?;
            headers.insert(name, value);
        }
        if config.connect_timeout_ms == 0 {
            return Err(ConfigProblem::new("connect_timeout_ms", "must be at least 1"));
        }
        let client = Client::builder()
            .default_headers(headers)
            .user_agent(concat!("mcp-runtime/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .pool_idle_timeout(Duration::from_millis(config.pool.idle_timeout_ms))
            .pool_max_idle_per_host(config.pool.max_idle_per_host)
            .tcp_nodelay(true)
            .no_proxy()
            .redirect(mcp_adapter_rest::client::same_origin(3))
            .build()
            .map_err(|e| ConfigProblem::new("url", format!("cannot build the HTTP client: {e}")))?;
        let exchange = config
            .token_exchange
            .as_ref()
            .map(|x| TokenExchange::new(x, "token_exchange", env).map(Arc::new))
            .transpose()?;
        let capacity = match &config.token_exchange {
            Some(x) => x.cache_capacity,
            None if per_caller => CALLER_SESSIONS,
            None => 0,
        };
        Ok(Self {
            client,
            url: parsed,
            protocol: config.protocol,
            session: ArcSwapOption::empty(),
            connecting: tokio::sync::Mutex::new(()),
            exchange,
            callers: moka::future::Cache::builder().max_capacity(capacity).time_to_idle(CALLER_SESSION_IDLE).build(),
            only_callers: per_caller && config.auth.is_none(),
            next_id: AtomicU64::new(1),
            max_message_bytes: config.max_message_bytes,
            request_timeout: Duration::from_millis(config.request_timeout_ms),
        })
    }

    /// The `token_exchange` of this upstream, when its calls go as their callers.
    pub fn exchange(&self) -> Option<&TokenExchange> {
        self.exchange.as_deref()
    }

    /// Starts a request; a 2025-era session the server forgot is started again once.
    pub async fn start(&self, out: &Outgoing<'_>) -> Result<Flight, UpstreamError> {
        let credential = out.credential.as_ref();
        let session = self.session_for(credential).await?;
        let response = self.post(&session, out).await?;
        let status = response.status();
        if session.id.is_some() && matches!(status, StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST) {
            let body = self.read_json(response).await.ok();
            if !session_lost(status, body.as_ref()) {
                return Err(http_error(status, body));
            }
            tracing::info!(upstream = %self.url, "the upstream forgot our session: initializing again");
            self.forget(&session, credential).await;
            let session = self.session_for(credential).await?;
            let response = self.post(&session, out).await?;
            return self.flight(response, session, credential).await;
        }
        self.flight(response, session, credential).await
    }

    async fn post(&self, session: &Session, out: &Outgoing<'_>) -> Result<Response, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let token = out.progress.then(|| json!(id));
        let params = wire::params(&session.dialect, out.params.clone(), out.capabilities, token.as_ref());
        let name = match out.method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str).map(str::to_owned),
            "resources/read" => params.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let mut rb =
            self.base(session, out.credential.as_ref().map(|c| &c.authorization)).header("mcp-method", out.method);
        if session.dialect == Dialect::Modern {
            if let Some(name) = name {
                rb = rb.header("mcp-name", encode_value(&name));
            }
            for (header, value) in &out.param_headers {
                rb = rb.header(format!("mcp-param-{header}"), encode_value(value));
            }
        }
        for (k, v) in out.propagation {
            rb = rb.header(*k, v);
        }
        rb.json(&wire::request(id, out.method, params)).send().await.map_err(unreachable)
    }

    /// A POST with the headers every message carries; a caller's own `authorization`
    /// replaces the service credential.
    fn base(&self, session: &Session, authorization: Option<&HeaderValue>) -> reqwest::RequestBuilder {
        let mut rb = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(PROTOCOL_VERSION, session.dialect.version());
        if let Some(id) = &session.id {
            rb = rb.header(SESSION_ID, id.clone());
        }
        if let Some(value) = authorization {
            rb = rb.header(AUTHORIZATION, value.clone());
        }
        rb
    }

    /// The flight of an answered POST: one JSON message, or an SSE stream of them.
    async fn flight(
        &self,
        response: Response,
        session: Arc<Session>,
        credential: Option<&CallerCredential>,
    ) -> Result<Flight, UpstreamError> {
        let status = response.status();
        let sse = is_event_stream(response.headers());
        if !status.is_success() {
            return Err(http_error(status, self.read_json(response).await.ok()));
        }
        let body = if sse {
            Body::Sse(SseReader::new(response.bytes_stream().boxed_stream(), self.max_message_bytes))
        } else {
            let message = self.read_json(response).await?;
            Body::Json(Some(Incoming::parse(message).ok_or_else(|| failed("its answer is not a JSON-RPC message"))?))
        };
        Ok(Flight::Http(Box::new(HttpFlight {
            body,
            client: self.client.clone(),
            url: self.url.clone(),
            session,
            authorization: credential.map(|c| c.authorization.clone()),
        })))
    }

    async fn read_json(&self, mut response: Response) -> Result<Value, UpstreamError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(format!("reading its answer: {e}")))? {
            if body.len() + chunk.len() > self.max_message_bytes {
                return Err(failed(format!("its answer is longer than {} bytes", self.max_message_bytes)));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| failed(format!("its answer is not JSON: {e}")))
    }
}

trait BoxedStream {
    fn boxed_stream(self) -> BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>;
}

impl<S: futures_util::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static> BoxedStream for S {
    fn boxed_stream(self) -> BoxStream<'static, Result<bytes::Bytes, reqwest::Error>> {
        Box::pin(self)
    }
}

/// A request in flight over HTTP.
pub struct HttpFlight {
    body: Body,
    client: Client,
    url: Url,
    session: Arc<Session>,
    /// The caller's own credential, when the request went with one: answers go with it too.
    authorization: Option<HeaderValue>,
}

impl std::fmt::Debug for HttpFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpFlight").field("url", &self.url.as_str()).finish_non_exhaustive()
    }
}

enum Body {
    Json(Option<Incoming>),
    Sse(SseReader<BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>>),
}

impl HttpFlight {
    /// The next message of the response.
    pub async fn next(&mut self) -> Result<Option<Incoming>, UpstreamError> {
        match &mut self.body {
            Body::Json(message) => Ok(message.take()),
            Body::Sse(reader) => loop {
                let Some(data) = reader.next_data().await.map_err(failed)? else { return Ok(None) };
                let value: Value =
                    serde_json::from_str(&data).map_err(|e| failed(format!("an event is not JSON: {e}")))?;
                if let Some(m) = Incoming::parse(value) {
                    return Ok(Some(m));
                }
            },
        }
    }

    /// Answers an upstream request: a POST of the response in the same session
    /// (MCP 2025-11-25 basic/transports § Sending Messages to the Server).
    pub async fn respond(&mut self, id: &Value, outcome: Result<Value, ErrorObject>) -> Result<(), UpstreamError> {
        let mut rb = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(PROTOCOL_VERSION, self.session.dialect.version());
        if let Some(sid) = &self.session.id {
            rb = rb.header(SESSION_ID, sid.clone());
        }
        if let Some(value) = &self.authorization {
            rb = rb.header(AUTHORIZATION, value.clone());
        }
        let response = rb.json(&wire::response(id, outcome)).send().await.map_err(unreachable)?;
        if !response.status().is_success() {
            return Err(failed(format!("it refused our answer with HTTP {}", response.status())));
        }
        Ok(())
    }
}

/// A 2025-era server that no longer knows our session: 404 (MCP 2025-11-25 basic/transports
/// § Session Management), or, as deployed SDK servers answer, 400 with an error about the
/// session id.
fn session_lost(status: StatusCode, body: Option<&Value>) -> bool {
    let message = body.and_then(|b| b.pointer("/error/message")).and_then(Value::as_str).unwrap_or_default();
    status == StatusCode::NOT_FOUND || message.to_ascii_lowercase().contains("session")
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"))
}

/// An HTTP error status: the JSON-RPC error in the body when there is one.
fn http_error(status: StatusCode, body: Option<Value>) -> UpstreamError {
    match body.and_then(|b| serde_json::from_value::<ErrorObject>(b.get("error")?.clone()).ok()) {
        Some(e) if status == StatusCode::UNAUTHORIZED => UpstreamError::Unauthorized(Some(e.message)),
        Some(e) => UpstreamError::Rpc(e),
        None if status == StatusCode::UNAUTHORIZED => UpstreamError::Unauthorized(None),
        None => failed(format!("it answered HTTP {status}")),
    }
}

fn unreachable(e: reqwest::Error) -> UpstreamError {
    // reqwest's own message hides the cause ("error sending request"): add the chain.
    let mut why = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        why.push_str(": ");
        why.push_str(&s.to_string());
        source = s.source();
    }
    if e.is_timeout() || e.is_connect() { UpstreamError::Unreachable(why) } else { UpstreamError::Failed(why) }
}

fn failed(why: impl Into<String>) -> UpstreamError {
    UpstreamError::Failed(why.into())
}
