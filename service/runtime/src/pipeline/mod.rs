//! The one call pipeline of `tools/call`, `resources/read` and `prompts/get`, whose adapter
//! work task rounds run through as well ([`execute`]). A method checks its params and decides
//! a [`Plan`] (this MRTR round's input, cache key, deadline); [`invoke`] then answers from
//! the cache or runs the adapter under the deadline, cancelled when the answer is dropped,
//! checks and caches the result, finishes it into a result, an `input_required` round or an
//! error, and streams notifications when the request opted in.
//!
//! - [`target`]: what each method calls ([`Target`]) and how its result renders and caches.
//! - [`call`]: the call context, running under the deadline, the final message.
//! - [`stream`]: a call whose notifications turn the answer into a stream.

pub mod call;
pub mod stream;
pub mod target;

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use mcp_adapter_api::{AdapterError, CallContext, Identity, Input, Outcome};
use mcp_protocol::RequestId;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

pub use call::{Finisher, prepare, run};
pub use target::{Prompt, Resource, Target, Tool};

use crate::cluster::ratelimit::{Limited, Scope as LimitScope};
use crate::config::ToolLimits;
use crate::connect::{self, Connections, Credential};
use crate::mrtr::{self, Binding, RoundInput, RuntimeState, Sealer};
use crate::registry::Registry;
use crate::rpc::response;
use crate::rpc::{Accepts, Envelope, Kind, Reply, RpcError};
use crate::state::AppState;
use crate::telemetry::request::Scope;

/// What every method handler gets besides its params.
pub struct Ctx<'a> {
    /// Replica state.
    pub state: &'a Arc<AppState>,
    /// The registry snapshot this request runs on.
    pub registry: Arc<Registry>,
    /// Request headers (`Mcp-Param-*`).
    pub headers: &'a HeaderMap,
    /// The request id.
    pub id: &'a RequestId,
    /// The validated envelope.
    pub envelope: Envelope,
    /// What the client accepts.
    pub accepts: Accepts,
    /// Span, metrics and outcome of this request.
    pub scope: Scope,
    /// The authenticated caller, if any.
    pub identity: Option<Identity>,
}

impl Ctx<'_> {
    /// The caller's subject: binds MRTR state and owns tasks.
    pub fn principal(&self) -> Option<&str> {
        self.identity.as_ref().map(|i| i.key())
    }

    /// The virtual endpoint this request came to (`None`: `server.path`).
    pub fn endpoint(&self) -> Option<&str> {
        self.registry.endpoint.as_deref()
    }

    /// What a `requestState` of this request is bound to: `method` on `target` with
    /// `arguments`, for this caller on this endpoint.
    pub fn binding<'a>(&'a self, method: &'a str, target: &'a str, arguments: &'a Value) -> Binding<'a> {
        Binding { method, target, arguments, principal: self.principal(), endpoint: self.endpoint() }
    }

    /// The MCP path this request came to: `server.path` or a virtual endpoint's.
    pub fn path(&self) -> &str {
        self.endpoint().unwrap_or(&self.state.server.path)
    }

    /// Who owns the tasks this request creates, reads or cancels: the caller, qualified on a
    /// virtual endpoint by its path (a task id from one endpoint is unknown on another).
    pub fn task_owner(&self) -> Option<String> {
        match self.endpoint() {
            None => self.principal().map(str::to_owned),
            Some(e) => Some(format!("{e}\u{0}{}", self.principal().unwrap_or(""))),
        }
    }
}

/// How a call runs, as its method decided.
#[derive(Debug, Default)]
pub struct Plan {
    /// This round's `inputResponses` for the adapter (MCP 2026-07-28 basic/patterns/mrtr).
    pub responses: Option<Map<String, Value>>,
    /// The adapter's state from the previous round.
    pub state: Option<Value>,
    /// The runtime's MRTR state, carried into an interim result.
    pub runtime: Option<RuntimeState>,
    /// Cache key and lifetime, when the result may be served from and kept in the cache.
    pub cache: Option<(String, Duration)>,
    /// The call's budget.
    pub timeout: Duration,
    /// When the call began, when that was read already ([`limit`]'s reading).
    pub began: Option<Instant>,
}

/// Takes this round's `inputResponses` and `requestState` out of `params`, verified against
/// `binding` (MCP 2026-07-28 basic/patterns/mrtr § Server behaviour steps 1–2).
pub fn input(ctx: &Ctx<'_>, params: &mut Map<String, Value>, binding: &Binding<'_>) -> Result<RoundInput, RpcError> {
    let input = mrtr::take_input(params, &ctx.state.sealer.load(), binding)?;
    ctx.scope.set_round(input.round);
    Ok(input)
}

/// Spends rate-limit budget of `tool` for the caller; `429` with when to retry. Reads the
/// clock when the tool has a limit, and returns the reading for the call to start from
/// ([`Plan::began`]): one read for both.
pub async fn limit(ctx: &Ctx<'_>, tool: &str, limits: ToolLimits) -> Result<Option<Instant>, RpcError> {
    if limits.per_caller.is_none() && limits.global.is_none() {
        return Ok(None);
    }
    let now = Instant::now();
    ctx.state.limiter.check(tool, ctx.principal(), limits, now.into_std()).await.map_err(|l| rate_limited(tool, l))?;
    Ok(Some(now))
}

/// Runs `target` as `plan` says and answers: from the cache, as one message, or as a stream.
pub async fn invoke<T: Target>(ctx: &Ctx<'_>, target: T, plan: Plan) -> Result<Reply, RpcError> {
    let Plan { responses, state, runtime, cache, timeout, began } = plan;
    // The cache's futures are boxed: large, and taken only by calls whose results are cached.
    if let Some((key, _)) = &cache
        && let Some(body) = Box::pin(ctx.state.cache.get(key)).await
    {
        return Ok(Reply::ok(response::success(ctx.id, &*raw(&body)?)));
    }
    let now = began.unwrap_or_else(Instant::now);
    let (mut cx, notices) = prepare(ctx, timeout, now);
    let finisher = Finisher::new(ctx, T::TOOL, now).with_runtime(runtime);
    let user_auth = target.user_auth().and_then(|_| UserAuth::of(ctx.state));
    let streaming = finisher.streaming();
    let app = Arc::clone(ctx.state);
    let endpoint = ctx.registry.endpoint.clone();
    let call = async move {
        // Whatever ends this future early (client gone, shutdown) cancels the adapter's work;
        // a call that ended has none left (and skips the token's lock and wake-ups).
        let cancel_on_drop = cx.cancel.clone().drop_guard();
        let input = Input { responses: responses.as_ref(), state: state.as_ref() };
        let outcome = execute(&target, input, &mut cx, user_auth.as_ref(), timeout).await;
        drop(cancel_on_drop.disarm());
        if let (Some((key, ttl)), Ok(Outcome::Complete(result))) = (&cache, &outcome)
            && let Some(body) = target.cached(result, finisher.server_info())
        {
            Box::pin(app.cache.put(key, body.into(), *ttl)).await;
        }
        let binding = Binding {
            method: T::METHOD,
            target: target.name(),
            arguments: target.arguments(),
            principal: cx.identity.as_ref().map(|i| i.key()),
            endpoint: endpoint.as_deref(),
        };
        finisher.finish(outcome, &cx.client_capabilities, &binding, |result, id, info| target.render(result, id, info))
    };
    // Boxed once here, so the futures of the method, `run` and `dispatch` above it stay
    // small (they are moved as they are built); a streamed answer keeps this box.
    Ok(stream::respond(Box::pin(call), notices, streaming).await)
}

/// What a call of a tool whose adapter has `user_auth` needs besides its context: the
/// connections, and the sealer of the links it hands out.
pub struct UserAuth {
    /// The replica's connections.
    pub connections: Arc<Connections>,
    /// The `requestState` key ring's sealer, as now.
    pub sealer: Arc<Sealer>,
}

impl UserAuth {
    /// From the replica's state; `None` without `[user_auth]`.
    pub fn of(state: &AppState) -> Option<Self> {
        let connections = Arc::clone(state.connections.as_ref()?);
        Some(Self { connections, sealer: state.sealer.load_full() })
    }

    fn call<'a>(&'a self, cx: &'a CallContext, upstream: &'a str, tool: &'a str) -> connect::Call<'a> {
        connect::Call {
            sealer: &self.sealer,
            identity: cx.identity.as_ref(),
            upstream,
            tool,
            capabilities: &cx.client_capabilities,
        }
    }
}

/// The adapter work of a call, for a request or a task round: the caller's upstream token
/// when the adapter has `user_auth` (or the request to connect), the adapter under the
/// context's deadline (`budget` long), then the check of a complete result.
pub async fn execute<T: Target>(
    target: &T,
    input: Input<'_>,
    cx: &mut CallContext,
    user_auth: Option<&UserAuth>,
    budget: Duration,
) -> Result<Outcome<T::Output>, AdapterError> {
    let connect = match (target.user_auth(), user_auth) {
        (Some(upstream), Some(ua)) => Some((upstream, ua)),
        // `[user_auth]` is read at start-up: an adapter that gained `user_auth` in a reload
        // is not called without the caller's token.
        (Some(upstream), None) => {
            return target.refusal(format!(
                "The tool '{}' acts as you at {upstream}, which this server can do only after a restart \
                 with [user_auth] configured.",
                target.name()
            ));
        }
        (None, _) => None,
    };
    if let Some((upstream, ua)) = connect {
        // Boxed: a large future (a token refresh at the upstream), taken only by `user_auth`
        // adapters; inline, it would be copied with every call's boxed future.
        match Box::pin(ua.connections.credential(&ua.call(cx, upstream, target.name()))).await {
            Credential::Token(token) => cx.user_token = Some(token),
            Credential::Ask(required) => return Ok(Outcome::InputRequired(required)),
            Credential::Refuse(text) => return target.refusal(text),
        }
    }
    let cx = &*cx;
    let outcome = match (run(cx, target.call(input, cx), budget).await, connect) {
        // The upstream refused the caller's token (revoked early): connect again.
        (Err(AdapterError::UserTokenRefused), Some((upstream, ua))) => {
            match ua.connections.refused(&ua.call(cx, upstream, target.name())).await {
                Credential::Ask(required) => return Ok(Outcome::InputRequired(required)),
                Credential::Refuse(text) => return target.refusal(text),
                Credential::Token(_) => Err(AdapterError::UserTokenRefused),
            }
        }
        (outcome, _) => outcome,
    };
    outcome.map(|outcome| match outcome {
        Outcome::Complete(mut result) => {
            target.check(&mut result);
            Outcome::Complete(result)
        }
        asking => asking,
    })
}

/// A cached result body as raw JSON.
fn raw(body: &[u8]) -> Result<Box<serde_json::value::RawValue>, RpcError> {
    serde_json::from_slice(body).map_err(|e| RpcError::internal(&format!("cached result is not JSON: {e}")))
}

/// `429` with when to retry.
fn rate_limited(tool: &str, limited: Limited) -> RpcError {
    let ms = u64::try_from(limited.retry_after.as_millis()).unwrap_or(u64::MAX).max(1);
    let scope = match limited.scope {
        LimitScope::PerCaller => "per_caller",
        LimitScope::Global => "global",
    };
    RpcError::new(
        Kind::RateLimited,
        format!("Rate limited: tool '{tool}' allows no more calls now ({scope} limit); retry in {ms} ms"),
    )
    .with_data(json!({ "retryAfterMs": ms, "limit": scope, "tool": tool }))
}
