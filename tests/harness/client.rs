//! An MCP client for tests: builds requests with the 2026-07-28 envelope and the routing
//! headers derived from the body, and reads JSON or SSE answers.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

/// The protocol revision under test.
pub const VERSION: &str = "2026-07-28";

/// A `_meta` envelope declaring `capabilities`.
pub fn envelope(capabilities: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-e2e", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// One HTTP answer: status, headers, and the JSON-RPC messages it carried (one for JSON,
/// every event for SSE, the final response last).
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// Raw body.
    pub raw: Bytes,
    /// Parsed messages.
    pub messages: Vec<Value>,
}

impl Answer {
    /// `Content-Type` without parameters.
    pub fn content_type(&self) -> &str {
        self.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").split(';').next().unwrap_or("")
    }

    /// True for an SSE answer.
    pub fn is_sse(&self) -> bool {
        self.content_type() == "text/event-stream"
    }

    /// The final JSON-RPC message (the response).
    pub fn message(&self) -> &Value {
        self.messages
            .last()
            .unwrap_or_else(|| panic!("no JSON-RPC message in answer (status {}): {:?}", self.status, self.raw))
    }

    /// `result`, panicking with the error when there is none.
    pub fn result(&self) -> &Value {
        let m = self.message();
        m.get("result").unwrap_or_else(|| panic!("expected a result, got {m}"))
    }

    /// The text of content block `block` of the result; panics when that block has none.
    pub fn text(&self, block: usize) -> String {
        self.result()["content"][block]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text block {block}: {:?}", self.messages))
            .to_owned()
    }

    /// `error.code`, if the final message is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.messages.last()?.get("error")?.get("code")?.as_i64()
    }

    /// `error.message`.
    pub fn error_message(&self) -> &str {
        self.message()["error"]["message"].as_str().unwrap_or("")
    }

    /// Notifications that came before the response.
    pub fn notifications(&self) -> Vec<&Value> {
        self.messages.iter().filter(|m| m.get("method").is_some() && m.get("id").is_none()).collect()
    }
}

/// A client bound to one endpoint.
#[derive(Debug, Clone)]
pub struct Mcp {
    http: reqwest::Client,
    /// Endpoint URL.
    pub url: String,
    /// Capabilities declared by default.
    pub capabilities: Value,
    /// Headers sent with every request (before a call's own overrides).
    headers: Vec<(String, String)>,
}

static NEXT_ID: AtomicI64 = AtomicI64::new(1);

impl Mcp {
    /// A client for `url` declaring elicitation, sampling and roots.
    pub fn new(url: &str) -> Self {
        crate::install_crypto_provider();
        let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("http client");
        Self {
            http,
            url: url.to_owned(),
            capabilities: json!({"elicitation": {}, "sampling": {}, "roots": {}}),
            headers: Vec::new(),
        }
    }

    /// A client that speaks HTTP/2 in cleartext with prior knowledge (h2c), as service
    /// meshes and gateways do upstream: every request is a stream on one shared connection.
    pub fn over_h2c(url: &str) -> Self {
        crate::install_crypto_provider();
        let http = reqwest::Client::builder()
            .http2_prior_knowledge()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("http client");
        Self { http, ..Self::new(url) }
    }

    /// The same client sending `name: value` with every request (e.g. its bearer token).
    pub fn with_header(&self, name: &str, value: &str) -> Self {
        let mut headers = self.headers.clone();
        headers.push((name.to_owned(), value.to_owned()));
        Self { headers, ..self.clone() }
    }

    /// The same client declaring `capabilities` instead.
    pub fn with_capabilities(&self, capabilities: Value) -> Self {
        Self { capabilities, ..self.clone() }
    }

    /// A request body with a fresh id and the envelope merged into `params._meta`.
    pub fn body(&self, method: &str, params: Value) -> Value {
        let mut params = if params.is_null() { json!({}) } else { params };
        let mut meta = envelope(&self.capabilities);
        if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
            for (k, v) in extra {
                meta[k] = v.clone();
            }
        }
        params["_meta"] = meta;
        json!({"jsonrpc": "2.0", "id": NEXT_ID.fetch_add(1, Ordering::Relaxed), "method": method, "params": params})
    }

    /// The headers a conforming client sends for `body` (MCP 2026-07-28,
    /// basic/transports/streamable-http, request-metadata headers).
    pub fn headers_for(body: &Value) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        if let Some(v) = body.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion").and_then(Value::as_str)
        {
            h.push(("mcp-protocol-version".to_owned(), v.to_owned()));
        }
        let method = body["method"].as_str().unwrap_or_default();
        if !method.is_empty() {
            h.push(("mcp-method".to_owned(), method.to_owned()));
        }
        let name = match method {
            "tools/call" | "prompts/get" => body.pointer("/params/name"),
            "resources/read" => body.pointer("/params/uri"),
            m if m.starts_with("tasks/") => body.pointer("/params/taskId"),
            _ => None,
        };
        if let Some(n) = name.and_then(Value::as_str) {
            h.push(("mcp-name".to_owned(), encode_header(n)));
        }
        h
    }

    /// Sends `method` with `params` and the conforming headers.
    pub async fn call(&self, method: &str, params: Value) -> Answer {
        let body = self.body(method, params);
        self.send(&body, &[]).await
    }

    /// `tools/call name arguments`.
    pub async fn tool(&self, name: &str, arguments: Value) -> Answer {
        self.call("tools/call", json!({"name": name, "arguments": arguments})).await
    }

    /// Sends `body` with the conforming headers, then `overrides` (a `None` value removes
    /// the header; names are case-insensitive).
    pub async fn send(&self, body: &Value, overrides: &[(&str, Option<&str>)]) -> Answer {
        let mut headers: Vec<(String, String)> = Self::headers_for(body);
        headers.extend(self.headers.iter().cloned());
        for (name, value) in overrides {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            if let Some(v) = value {
                headers.push(((*name).to_owned(), (*v).to_owned()));
            }
        }
        let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        self.post_raw(serde_json::to_vec(body).expect("json"), &pairs).await
    }

    /// POSTs raw bytes with exactly `headers` (plus Host and Content-Length).
    pub async fn post_raw(&self, body: Vec<u8>, headers: &[(&str, &[u8])]) -> Answer {
        self.try_post_raw(body, headers).await.expect("POST")
    }

    /// Like [`Mcp::post_raw`], but a transport error (e.g. the server answered and closed
    /// before the upload finished) is returned instead of panicking.
    pub async fn try_post_raw(&self, body: Vec<u8>, headers: &[(&str, &[u8])]) -> reqwest::Result<Answer> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
            map.append(name, HeaderValue::from_bytes(value).expect("header value"));
        }
        let res = self.http.post(&self.url).headers(map).body(body).send().await?;
        Ok(read(res).await)
    }

    /// Sends `method` and returns the response still streaming (listen streams).
    pub async fn open_stream(&self, method: &str, params: Value) -> Stream {
        self.open_stream_raw(&self.body(method, params)).await
    }

    /// Sends `body` as it is (with the conforming headers and this client's own) and returns
    /// the response streaming.
    pub async fn open_stream_raw(&self, body: &Value) -> Stream {
        let mut headers = Self::headers_for(body);
        headers.extend(self.headers.iter().cloned());
        let mut req = self.http.post(&self.url).timeout(Duration::from_secs(3600)).json(body);
        for (n, v) in &headers {
            req = req.header(n, v);
        }
        Stream::new(req.send().await.expect("POST"), body["id"].clone())
    }
}

/// Header encoding for values that are not plain visible ASCII (MCP 2026-07-28,
/// basic/transports/streamable-http, request-metadata headers: the Base64 sentinel).
pub fn encode_header(value: &str) -> String {
    use base64::Engine as _;
    let plain = value.bytes().all(|b| (0x21..0x7f).contains(&b)) && !value.starts_with("=?base64?");
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

async fn read(res: reqwest::Response) -> Answer {
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let raw = res.bytes().await.expect("body");
    let sse =
        headers.get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|c| c.starts_with("text/event-stream"));
    let messages = if sse {
        sse_messages(&raw)
    } else if raw.is_empty() {
        Vec::new()
    } else {
        vec![
            serde_json::from_slice(&raw)
                .unwrap_or_else(|e| panic!("non-JSON body ({e}): {:?}", String::from_utf8_lossy(&raw))),
        ]
    };
    Answer { status, headers, raw, messages }
}

/// JSON messages of an SSE body, one per `data:` line; comments and other fields skipped.
pub fn sse_messages(raw: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(raw)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).expect("SSE data is one JSON message per line"))
        .collect()
}

/// A response body read incrementally (listen streams).
pub struct Stream {
    /// HTTP status.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: String,
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>,
    buf: Vec<u8>,
    /// The request id.
    pub id: Value,
}

impl Stream {
    /// Reads `res` incrementally; `id` is the id of the request it answers (null for a GET).
    pub fn new(res: reqwest::Response, id: Value) -> Self {
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Self { status: res.status().as_u16(), content_type, body: Box::pin(res.bytes_stream()), buf: Vec::new(), id }
    }

    /// The next message whose `method` is `method`, skipping others, within `timeout`.
    pub async fn until(&mut self, method: &str, timeout: Duration) -> Option<Value> {
        let end = tokio::time::Instant::now() + timeout;
        loop {
            let m = self.next(end.saturating_duration_since(tokio::time::Instant::now())).await?;
            if m["method"] == method {
                return Some(m);
            }
        }
    }

    /// The next SSE message (comments skipped), or `None` at end of stream or after `timeout`.
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buf.drain(..pos + 2).collect();
                if let Some(m) = sse_messages(&event).into_iter().next() {
                    return Some(m);
                }
                continue;
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
                _ => return None,
            }
        }
    }

    /// Raw bytes received within `timeout` (to see keep-alive comments).
    pub async fn raw_for(&mut self, timeout: Duration) -> Vec<u8> {
        let deadline = tokio::time::Instant::now() + timeout;
        while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, self.body.next()).await {
            self.buf.extend_from_slice(&chunk);
        }
        std::mem::take(&mut self.buf)
    }
}
