//! Connecting to an HTTP upstream: `server/discover` for a modern server, `initialize` and
//! its session for a 2025-era one, held and started again when the server forgets it; and a
//! session per caller for calls that go as their caller (`token_exchange`, `user_auth`): a 2025-era server
//! binds its session to whoever opened it (MCP 2025-11-25 basic/security_best_practices
//! § Session Hijacking).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_adapter_api::CancellationToken;
use mcp_adapter_api::protocol::version;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::{Http, Outgoing, SESSION_ID, failed, unreachable};
use crate::config::Protocol;
use crate::exchange::{UpstreamError, drive_quiet};
use crate::wire::{self, Dialect};

/// What connecting found out.
#[derive(Debug)]
pub struct Session {
    /// The revision spoken.
    pub dialect: Dialect,
    /// The 2025-era session id, when the server gave one.
    pub(super) id: Option<HeaderValue>,
    /// The server's capabilities (which lists exist).
    pub capabilities: Value,
}

/// A call's credential of its own: who (for the caller's session) and the header.
#[derive(Debug, Clone)]
pub struct CallerCredential {
    /// The caller's key (`issuer#subject`).
    pub caller: Arc<str>,
    /// `Authorization: Bearer <the caller's token>` (exchanged, or from the vault), sensitive.
    pub authorization: HeaderValue,
}

impl CallerCredential {
    /// The token the runtime took from its vault for this call (`user_auth`), if any.
    pub fn of_user(cx: &mcp_adapter_api::CallContext) -> Option<Self> {
        let token = cx.user_token.as_ref()?;
        Some(Self {
            caller: cx.identity.as_ref().map(|i| i.key_arc()).unwrap_or_default(),
            authorization: token.authorization().clone(),
        })
    }
}

impl Http {
    /// The current session, connecting first when there is none.
    pub async fn session(&self) -> Result<Arc<Session>, UpstreamError> {
        if let Some(s) = self.session.load_full() {
            return Ok(s);
        }
        let _one = self.connecting.lock().await;
        if let Some(s) = self.session.load_full() {
            return Ok(s);
        }
        let session = Arc::new(self.connect(None).await?);
        tracing::info!(upstream = %self.url, protocol = session.dialect.version(), session = session.id.is_some(), "connected to the MCP upstream");
        self.session.store(Some(Arc::clone(&session)));
        Ok(session)
    }

    /// `server/discover` or `initialize`, as `protocol` says, with the service credential or
    /// a caller's own.
    async fn connect(&self, credential: Option<&CallerCredential>) -> Result<Session, UpstreamError> {
        let deadline = Instant::now() + self.request_timeout;
        let authorization = credential.map(|c| &c.authorization);
        match self.protocol {
            Protocol::Modern => self.discover(deadline, credential).await,
            Protocol::Legacy => self.initialize(deadline, authorization).await,
            Protocol::Auto => match self.discover(deadline, credential).await {
                Ok(s) => Ok(s),
                Err(e @ (UpstreamError::Unreachable(_) | UpstreamError::Timeout(_))) => Err(e),
                Err(_) => self.initialize(deadline, authorization).await,
            },
        }
    }

    /// The session a request of `credential` goes in: the adapter's, or for a caller's own
    /// credential on a 2025-era server that hands out sessions, the caller's (opened with
    /// that credential on first use). Without a service credential (`only_callers`) every
    /// caller connects on their own, and nothing goes without a caller.
    pub(crate) async fn session_for(
        &self,
        credential: Option<&CallerCredential>,
    ) -> Result<Arc<Session>, UpstreamError> {
        let c = if self.only_callers {
            credential.ok_or_else(|| failed("it answers only its signed-in users, and this request has none"))?
        } else {
            let shared = self.session().await?;
            match credential.filter(|_| shared.id.is_some()) {
                Some(c) => c,
                None => return Ok(shared),
            }
        };
        self.callers
            .try_get_with(Arc::clone(&c.caller), async { self.connect(Some(c)).await.map(Arc::new) })
            .await
            .map_err(|e| (*e).clone())
    }

    /// Forgets `old` (the server lost it), unless another request already replaced it. A
    /// session that has an id and went with a caller's credential is that caller's
    /// ([`Self::session_for`]).
    pub(super) async fn forget(&self, old: &Arc<Session>, credential: Option<&CallerCredential>) {
        match credential {
            Some(c) => {
                // Another request may replace it in between: then it is opened once more.
                if self.callers.get(&c.caller).await.is_some_and(|s| Arc::ptr_eq(&s, old)) {
                    self.callers.invalidate(&c.caller).await;
                }
            }
            None => {
                self.session.compare_and_swap(&Some(Arc::clone(old)), None::<Arc<Session>>);
            }
        }
    }

    /// `server/discover` (MCP 2026-07-28 server/discover): a modern server lists 2026-07-28.
    async fn discover(
        &self,
        deadline: Instant,
        credential: Option<&CallerCredential>,
    ) -> Result<Session, UpstreamError> {
        let probe = Arc::new(Session { dialect: Dialect::Modern, id: None, capabilities: Value::Null });
        let out = Outgoing {
            method: "server/discover",
            params: Map::new(),
            capabilities: &json!({}),
            progress: false,
            param_headers: Vec::new(),
            propagation: &[],
            credential: credential.cloned(),
        };
        let response = self.post(&probe, &out).await?;
        let flight = self.flight(response, probe, credential).await?;
        let result = drive_quiet(flight, deadline, &CancellationToken::new()).await?;
        let speaks = result["supportedVersions"].as_array().is_some_and(|v| v.iter().any(|v| v == version::LATEST));
        if !speaks {
            return Err(failed(format!("it does not list {} in supportedVersions", version::LATEST)));
        }
        Ok(Session { dialect: Dialect::Modern, id: None, capabilities: result["capabilities"].clone() })
    }

    /// `initialize` + `notifications/initialized` (MCP 2025-11-25 basic/lifecycle § Initialization),
    /// as a caller when `authorization` is its own.
    async fn initialize(
        &self,
        deadline: Instant,
        authorization: Option<&HeaderValue>,
    ) -> Result<Session, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params = json!({
            "protocolVersion": wire::LEGACY_VERSION,
            "capabilities": wire::legacy_capabilities(),
            "clientInfo": wire::client_info(),
        });
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let mut rb = self.client.post(self.url.clone()).header(ACCEPT, "application/json, text/event-stream");
        if let Some(value) = authorization {
            rb = rb.header(AUTHORIZATION, value.clone());
        }
        let response = rb.json(&body).send().await.map_err(unreachable)?;
        let session_id = response.headers().get(SESSION_ID).cloned();
        let probe = Arc::new(Session {
            dialect: Dialect::Legacy(wire::LEGACY_VERSION.into()),
            id: None,
            capabilities: Value::Null,
        });
        let flight = self.flight(response, probe, None).await?;
        let result = drive_quiet(flight, deadline, &CancellationToken::new()).await?;
        let negotiated = result["protocolVersion"].as_str().unwrap_or(wire::LEGACY_VERSION).to_owned();
        if !version::LEGACY_SERVED.contains(&negotiated.as_str()) && !version::LEGACY.contains(&negotiated.as_str()) {
            return Err(failed(format!(
                "it answered initialize with protocol version '{negotiated}', which we do not speak"
            )));
        }
        let session = Session {
            dialect: Dialect::Legacy(negotiated),
            id: session_id,
            capabilities: result["capabilities"].clone(),
        };
        let done = self
            .base(&session, authorization)
            .json(&wire::notification("notifications/initialized", Value::Null))
            .send()
            .await
            .map_err(unreachable)?;
        if !done.status().is_success() {
            return Err(failed(format!("it refused notifications/initialized with HTTP {}", done.status())));
        }
        Ok(session)
    }
}
