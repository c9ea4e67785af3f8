//! The per-call context: deadline, cancellation, caller, client capabilities, notifications.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::secret::Secret;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Who is calling, when the runtime authenticated the request: a shared handle to the
/// [`Caller`] a token proved, read through its fields (`identity.subject`). A clone is one
/// reference count, however many claims the token had: a request clones its caller for
/// the call's context and the call record, on every call of an authenticated client.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity(Arc<Caller>);

/// What an [`Identity`] holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    /// The subject: the token's `sub`, or the owner a static token names.
    pub subject: Arc<str>,
    /// The issuer that vouched for the subject (`iss`); `None` for static tokens.
    pub issuer: Option<Arc<str>>,
    /// Granted scopes (the token's `scope`, RFC 9068 §2.2.3).
    pub scopes: Arc<[String]>,
    /// The token's claims (empty for static tokens), for claim conditions in access rules.
    pub claims: Arc<serde_json::Map<String, Value>>,
    key: Arc<str>,
    /// The access token that proved this identity, when an issuer vouched for it: the subject
    /// token an adapter may exchange for an upstream's own token (RFC 8693). Never sent on as
    /// it is; `None` for static tokens and anonymous calls.
    subject_token: Option<Arc<Secret>>,
}

impl std::ops::Deref for Identity {
    type Target = Caller;

    fn deref(&self) -> &Caller {
        &self.0
    }
}

impl Identity {
    /// A caller named by a static token (or restored from a stored owner key).
    pub fn new(subject: impl Into<Arc<str>>) -> Self {
        let subject: Arc<str> = subject.into();
        Self(Arc::new(Caller {
            key: Arc::clone(&subject),
            subject,
            issuer: None,
            scopes: Arc::new([]),
            claims: Arc::default(),
            subject_token: None,
        }))
    }

    /// A caller vouched for by an issuer's token.
    pub fn issued(issuer: &str, subject: &str, scopes: Vec<String>, claims: serde_json::Map<String, Value>) -> Self {
        Self(Arc::new(Caller {
            key: format!("{issuer}#{subject}").into(),
            subject: subject.into(),
            issuer: Some(issuer.into()),
            scopes: scopes.into(),
            claims: Arc::new(claims),
            subject_token: None,
        }))
    }

    /// The same caller, carrying the access token that proved it (see [`Self::subject_token`]).
    pub fn with_subject_token(mut self, token: &str) -> Self {
        Arc::make_mut(&mut self.0).subject_token = Some(Arc::new(Secret::new(token.as_bytes().to_vec())));
        self
    }

    /// The caller's own access token, for an RFC 8693 token exchange; `None` for static
    /// tokens, restored owners and anonymous calls.
    pub fn subject_token(&self) -> Option<&Secret> {
        self.0.subject_token.as_deref()
    }

    /// The stable owner key (issuer and subject): binds MRTR state, owns tasks, keys rate limits.
    /// Two issuers' identical `sub` values never collide.
    pub fn key(&self) -> &str {
        &self.0.key
    }

    /// The same, shared: `issuer#subject`, or the subject of a static token.
    pub fn key_arc(&self) -> Arc<str> {
        Arc::clone(&self.0.key)
    }
}

/// A request-scoped notification an adapter emits while a call runs (MCP 2026-07-28 basic/patterns/progress § request-scoped notifications).
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// `notifications/progress`; the runtime adds the token and drops non-increasing values.
    Progress {
        /// Work done so far; must increase.
        progress: f64,
        /// Total work, when known.
        total: Option<f64>,
        /// What is happening.
        message: Option<String>,
    },
    /// `notifications/message` (deprecated logging); delivered only at or above the request's
    /// `logLevel`, and never when the request did not ask for logs.
    Log {
        /// One of the eight levels.
        level: &'static str,
        /// The message data.
        data: Value,
    },
}

/// Where a call's notices go. Disabled (a no-op) when the request cannot receive them: no
/// `progressToken`/`logLevel`, or a client that does not accept a stream.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    tx: Option<mpsc::UnboundedSender<Notice>>,
}

impl Notifier {
    /// A notifier that sends into `tx`.
    pub fn new(tx: mpsc::UnboundedSender<Notice>) -> Self {
        Self { tx: Some(tx) }
    }

    /// True when notices reach the client; adapters may skip work to produce them otherwise.
    pub fn is_enabled(&self) -> bool {
        self.tx.is_some()
    }

    /// Emits a notice (dropped silently when disabled or the client went away).
    pub fn send(&self, notice: Notice) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(notice);
        }
    }
}

/// Everything a call may need besides its arguments.
#[derive(Debug)]
pub struct CallContext {
    /// Finish (or give up) by then.
    pub deadline: Instant,
    /// Fires when the client went away or the runtime shuts down; stop work promptly.
    pub cancel: CancellationToken,
    /// The authenticated caller, if any.
    pub identity: Option<Identity>,
    /// The request's `clientCapabilities` (MCP 2026-07-28 basic § Client capabilities): never assume more than this.
    pub client_capabilities: Value,
    /// Request-scoped notifications.
    pub notifier: Notifier,
    /// W3C trace context to pass on to backends as HTTP headers (`traceparent`, `tracestate`,
    /// `baggage`): the adapter span's when OpenTelemetry is on, the caller's unchanged when it
    /// is off, empty when the caller sent none.
    pub propagation: Vec<(&'static str, String)>,
    /// The runtime's span for this call (a child of the MCP request span). The runtime runs
    /// the adapter future inside it, so spans an adapter opens nest under it without help;
    /// disabled when tracing is off.
    pub span: tracing::Span,
    /// The caller's own access token at this adapter's upstream, when the adapter names an
    /// `[[upstream_auth]]` with `user_auth` (the runtime takes it from its vault, refreshed
    /// when due). Send it as `Authorization`; when the upstream refuses it, answer
    /// [`crate::AdapterError::UserTokenRefused`] and the runtime asks the caller to connect again.
    pub user_token: Option<UserToken>,
}

/// A caller's own access token at an upstream, as the `Authorization` value that carries it
/// (`Bearer <token>`, marked sensitive so HTTP stacks never log it). Cheap to clone; `Debug`
/// shows no token.
#[derive(Clone, PartialEq, Eq)]
pub struct UserToken(http::HeaderValue);

impl UserToken {
    /// The token `token` as a bearer; `None` when it cannot be a header value.
    pub fn bearer(token: &str) -> Option<Self> {
        let mut value = http::HeaderValue::try_from(format!("Bearer {token}")).ok()?;
        value.set_sensitive(true);
        Some(Self(value))
    }

    /// The `Authorization` header value.
    pub fn authorization(&self) -> &http::HeaderValue {
        &self.0
    }
}

impl std::fmt::Debug for UserToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserToken(..)")
    }
}

impl CallContext {
    /// A context for tests and tools run outside a request: no caller, no capabilities,
    /// notices dropped.
    pub fn detached(timeout: Duration) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            cancel: CancellationToken::new(),
            identity: None,
            client_capabilities: Value::Object(Default::default()),
            notifier: Notifier::default(),
            propagation: Vec::new(),
            span: tracing::Span::none(),
            user_token: None,
        }
    }

    /// Time left before the deadline.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Reports progress (see [`Notice::Progress`]).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.notifier.is_enabled() {
            self.notifier.send(Notice::Progress { progress, total, message: message.map(str::to_owned) });
        }
    }

    /// Emits a log message (see [`Notice::Log`]).
    pub fn log(&self, level: &'static str, data: impl Into<Value>) {
        if self.notifier.is_enabled() {
            self.notifier.send(Notice::Log { level, data: data.into() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subject_token_travels_with_the_caller_and_never_prints() {
        let static_caller = Identity::new("robot");
        assert!(static_caller.subject_token().is_none());
        let caller =
            Identity::issued("https://idp", "ada", Vec::new(), Default::default()).with_subject_token("eyJ.a.b");
        assert_eq!(caller.subject_token().map(Secret::expose_str), Some("eyJ.a.b"));
        assert_eq!(caller.key(), "https://idp#ada", "the token does not change who the caller is");
        assert!(!format!("{caller:?}").contains("eyJ.a.b"));
    }
}
