//! The parts of a call: its context (deadline, cancellation, notifier, span), running the
//! adapter under the deadline, and turning an outcome (result, input request, error) into
//! the final message.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use futures_util::FutureExt as _;
use mcp_adapter_api::{AdapterError, CallContext, Notice, Notifier, Outcome};
use mcp_protocol::RequestId;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::Ctx;
use super::stream::{Final, NoticeFormat, Streaming};
use crate::mrtr::{self, Binding, RuntimeState};
use crate::registry::Registry;
use crate::rpc::error::{Failure, from_adapter};
use crate::rpc::response::{self, ResultObject, ResultType, ServerInfo};
use crate::state::AppState;
use crate::telemetry::request::Scope;

/// Notices of a call on their way to the stream, when the request opted in.
pub type Notices = Option<(mpsc::UnboundedReceiver<Notice>, NoticeFormat)>;

/// The call context for this request: deadline, cancellation, capabilities, a notifier
/// that is a no-op unless the request asked for notifications and accepts SSE (MCP 2026-07-28 basic/patterns/progress § request-scoped notifications),
/// and the adapter span with the trace headers for upstreams. `now`: the call starts (read
/// once by the caller, which times the call from it too).
pub fn prepare(ctx: &Ctx<'_>, timeout: Duration, now: Instant) -> (CallContext, Notices) {
    let env = &ctx.envelope;
    let format = if ctx.accepts.sse { NoticeFormat::new(env.progress_token.clone(), env.log_level) } else { None };
    let (notifier, notices) = match format {
        Some(f) => {
            let (tx, rx) = mpsc::unbounded_channel();
            (Notifier::new(tx), Some((rx, f)))
        }
        None => (Notifier::default(), None),
    };
    let (span, propagation) = ctx.scope.adapter_call();
    let cx = CallContext {
        deadline: now + timeout,
        cancel: CancellationToken::new(),
        identity: ctx.identity.clone(),
        client_capabilities: env.client_capabilities.clone(),
        notifier,
        propagation,
        span,
        user_token: None,
    };
    (cx, notices)
}

/// Awaits an adapter call under the context's deadline. A panicking adapter becomes an
/// internal error for this request only; nothing else is affected. `budget`: the time the
/// deadline allows, for the timeout's message (known to the caller: no clock read here).
pub async fn run<T>(
    cx: &CallContext,
    call: impl Future<Output = Result<Outcome<T>, AdapterError>>,
    budget: Duration,
) -> Result<Outcome<T>, AdapterError> {
    let guarded = std::panic::AssertUnwindSafe(call.instrument(cx.span.clone())).catch_unwind();
    match tokio::time::timeout_at(cx.deadline, guarded).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(AdapterError::Internal(format!("adapter panicked: {what}")))
        }
        Err(_) => Err(AdapterError::Timeout(budget)),
    }
}

/// Builds the final message of a call; owned so it can move into a streamed call.
pub struct Finisher {
    id: RequestId,
    state: Arc<AppState>,
    registry: Arc<Registry>,
    is_tool_call: bool,
    sse: bool,
    runtime: Option<RuntimeState>,
    scope: Scope,
    started: Instant,
}

impl Finisher {
    /// For the request in `ctx`, whose adapter call started `started`.
    pub fn new(ctx: &Ctx<'_>, is_tool_call: bool, started: Instant) -> Self {
        Self {
            id: ctx.id.clone(),
            state: Arc::clone(ctx.state),
            registry: Arc::clone(&ctx.registry),
            is_tool_call,
            sse: ctx.accepts.sse,
            runtime: None,
            scope: {
                ctx.scope.expect_call();
                ctx.scope.clone()
            },
            started,
        }
    }

    /// Carries the runtime's MRTR state (preflight answers) into any interim result.
    pub fn with_runtime(mut self, runtime: Option<RuntimeState>) -> Self {
        self.runtime = runtime;
        self
    }

    /// The final message for `outcome`. `complete` renders a complete result given the
    /// request id and `serverInfo`.
    pub fn finish<T: 'static>(
        &self,
        outcome: Result<Outcome<T>, AdapterError>,
        capabilities: &Value,
        binding: &Binding<'_>,
        complete: impl FnOnce(T, &RequestId, &ServerInfo) -> Vec<u8>,
    ) -> Final {
        self.scope.adapter_finished(self.started.elapsed(), outcome.is_ok());
        let info = &self.registry.server_info;
        let error = |e: &crate::rpc::RpcError| {
            self.scope.failed(e);
            (e.kind.wire().0, response::error(Some(&self.id), e))
        };
        match outcome {
            Ok(Outcome::Complete(result)) => {
                let tool_error = (&result as &dyn std::any::Any)
                    .downcast_ref::<mcp_protocol::CallToolResult>()
                    .filter(|r| r.is_error);
                self.scope.completed(tool_error);
                let body = complete(result, &self.id, info);
                self.scope.answered(&body);
                (StatusCode::OK, body)
            }
            Ok(Outcome::InputRequired(required)) => {
                let sealer = self.state.sealer.load();
                match mrtr::interim(required, self.runtime.as_ref(), capabilities, &sealer, binding, self.scope.round())
                {
                    Ok(body) => {
                        self.scope.input_required();
                        (
                            StatusCode::OK,
                            response::success(&self.id, &ResultObject::new(ResultType::InputRequired, &body, info)),
                        )
                    }
                    Err(e) => error(&e),
                }
            }
            Err(e) => match from_adapter(e, self.is_tool_call, self.scope.adapter_name()) {
                Failure::Rpc(e) => error(&e),
                Failure::ToolError(r) => {
                    self.scope.completed(Some(&r));
                    (StatusCode::OK, response::success(&self.id, &ResultObject::new(ResultType::Complete, &r, info)))
                }
            },
        }
    }

    /// `serverInfo`, rendered.
    pub fn server_info(&self) -> &ServerInfo {
        &self.registry.server_info
    }

    /// How this call may answer (SSE allowed, keep-alive interval).
    pub fn streaming(&self) -> Streaming {
        Streaming { allowed: self.sse, keepalive: self.state.server.sse_keepalive }
    }
}
