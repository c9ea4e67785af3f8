//! One call through to the upstream: arguments, progress and log notices, cancellation, and
//! the upstream's questions relayed to our caller as our own MRTR round (MCP 2026-07-28
//! basic/patterns/mrtr), its state sealed by the runtime so any replica can continue it.
//!
//! - A modern upstream answers `input_required`: its `inputRequests` go to our caller as
//!   they are, its `requestState` rides inside ours (`u`, with the mark `m`); the retry hands
//!   the caller's `inputResponses` and that state back to it. `inputResponses` a client sends
//!   with a first request reach it too: it may complete with them alone.
//! - A 2025-era upstream sends requests (`elicitation/create`, ...) during the call. Those
//!   cannot be held open across replicas, so the call is re-run: the first question without
//!   an answer ends this round (`upstream-<n>`, numbered in the order asked), answers so far
//!   ride in our state (`a`), and on the retry each question is answered from them at once.
//!   A tool that asks its questions in a fixed order (what MRTR asks of servers too) sees a
//!   user who answered at once.

use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_adapter_api::protocol::meta::LOG_LEVELS;
use mcp_adapter_api::protocol::mrtr::InputRequest;
use mcp_adapter_api::{AdapterError, CallContext, Input, InputRequired, Outcome};
use mcp_adapter_rest::token_exchange::{ExchangeError, TokenExchange};
use serde_json::{Map, Value, json};

use crate::exchange::{Answer, Ended, Handlers, UpstreamError, drive};
use crate::http::{CallerCredential, Outgoing};
use crate::upstream::{Shared, Transport};

/// Sends `method` with `params` (already in the upstream's names) and drives it to a result
/// or an input round.
pub async fn call(
    shared: &Shared,
    method: &str,
    mut params: Map<String, Value>,
    param_headers: Vec<(String, String)>,
    input: Input<'_>,
    cx: &CallContext,
) -> Result<Outcome<Value>, AdapterError> {
    let state = input.state.and_then(Value::as_object);
    retry_params(&mut params, input);
    let mut answers = state.and_then(|s| s.get("a")).and_then(Value::as_object).cloned().unwrap_or_default();
    if let (Some(key), Some(responses)) = (state.and_then(|s| s.get("k")).and_then(Value::as_str), input.responses)
        && let Some(answer) = responses.get(key)
    {
        answers.insert(key.to_owned(), answer.clone());
    }

    let exchange = match &shared.transport {
        Transport::Http(http) => http.exchange(),
        Transport::Stdio(_) => None,
    };
    let credential = match (&cx.user_token, exchange) {
        // `user_auth`: the caller's own token at the upstream, from the runtime's vault.
        (Some(_), _) => CallerCredential::of_user(cx),
        (None, Some(x)) => match caller_credential(x, cx).await? {
            Ok(credential) => Some(credential),
            Err(e) => return no_credential(method, &e),
        },
        (None, None) => None,
    };
    // Kept for one retry with a fresh token (below).
    let again = credential.as_ref().map(|_| (params.clone(), param_headers.clone()));
    let out = |params, param_headers, credential| Outgoing {
        method,
        params,
        capabilities: &cx.client_capabilities,
        progress: cx.notifier.is_enabled(),
        param_headers,
        propagation: &cx.propagation,
        credential,
    };
    let mut started = shared.transport.start(out(params, param_headers, credential.clone()), cx.deadline).await;
    // An exchanged token the upstream refuses (revoked, or its keys rotated, before it
    // expired) is dropped and the request sent once more with a fresh one: a 401 means it
    // was not carried out (RFC 6750 § 3.1).
    let unauthorized = matches!(started, Err(UpstreamError::Unauthorized(_)));
    // The caller's own token refused: the runtime asks the caller to connect again.
    if unauthorized && cx.user_token.is_some() {
        return Err(AdapterError::UserTokenRefused);
    }
    if unauthorized && let (Some(x), Some(refused), Some((params, param_headers))) = (exchange, credential, again) {
        x.forget(cx, &refused.authorization).await;
        match caller_credential(x, cx).await? {
            Ok(fresh) if fresh.authorization != refused.authorization => {
                started = shared.transport.start(out(params, param_headers, Some(fresh)), cx.deadline).await;
            }
            Ok(_) => {}
            Err(e) => return no_credential(method, &e),
        }
    }
    let (flight, _) = started.map_err(|e| to_error(e, None))?;
    let asked = AtomicUsize::new(0);
    let mut notice = |m: &str, p: &Value| notify(cx, m, p);
    let mut ask = |_: &str, _: &Value| {
        let key = format!("upstream-{}", asked.fetch_add(1, Ordering::Relaxed));
        match answers.get(&key) {
            Some(a) => Answer::Reply(Ok(a.clone())),
            None => Answer::Stop,
        }
    };
    let mut h = Handlers { deadline: cx.deadline, cancel: &cx.cancel, notice: &mut notice, ask: &mut ask };
    let ended = drive(flight, &mut h).await.map_err(|e| to_error(e, None))?;
    match ended {
        Ended::Result(result) if result.get("resultType").and_then(Value::as_str) == Some("input_required") => {
            relay_input_required(&result, cx).map(Outcome::InputRequired)
        }
        Ended::Result(result) => Ok(Outcome::Complete(result)),
        Ended::Asked { method, params } => {
            let key = format!("upstream-{}", asked.load(Ordering::Relaxed) - 1);
            let request = input_request(&method, params)?;
            check_capability(&request, cx)?;
            let state = json!({"a": answers, "k": key});
            Ok(Outcome::InputRequired(InputRequired::ask(key, request).with_state(state)))
        }
    }
}

/// The caller's own credential for an upstream whose calls go as their callers
/// (`token_exchange`): exchanged, or from the cache, within the call's deadline.
pub(crate) async fn caller_credential(
    exchange: &TokenExchange,
    cx: &CallContext,
) -> Result<Result<CallerCredential, ExchangeError>, AdapterError> {
    Ok(exchange.for_call(cx).await?.map(|authorization| {
        // An exchange succeeded, so the call has an identity.
        let caller = cx.identity.as_ref().map(|i| i.key_arc()).unwrap_or_default();
        CallerCredential { caller, authorization }
    }))
}

/// No token for the upstream: a tool says so as its result (the model can tell the user); a
/// prompt or resource has no such result, so it is an error.
fn no_credential(method: &str, e: &ExchangeError) -> Result<Outcome<Value>, AdapterError> {
    if method == "tools/call" {
        let text = format!("This tool has no upstream credential for this call: {e}.");
        return Ok(Outcome::Complete(json!({"content": [{"type": "text", "text": text}], "isError": true})));
    }
    Err(AdapterError::Backend(format!("no upstream credential for this call: {e}")))
}

/// What a modern upstream gets of the caller's input (MCP 2026-07-28 basic/patterns/mrtr
/// § Retrying: inputResponses and requestState), added to `params`:
/// - in a round it started (our state holds `m`): the caller's `inputResponses`, and its own
///   `requestState` back (`u`) when it gave one;
/// - in a first request (no state): the `inputResponses` the client sent with it, as they
///   are; the upstream ignores keys it did not ask for and may complete at once with those
///   it did, as it would if asked directly.
///
/// In a round of a 2025-era upstream (`a`, `k`) the answers are ours to replay, not its; and
/// a 2025-era upstream never sees these params ([`crate::wire::params`] leaves them out).
fn retry_params(params: &mut Map<String, Value>, input: Input<'_>) {
    let state = input.state.and_then(Value::as_object);
    let modern_round = state.is_some_and(|s| s.contains_key("m"));
    if modern_round && let Some(upstream_state) = state.and_then(|s| s.get("u")) {
        params.insert("requestState".into(), upstream_state.clone());
    }
    if (modern_round || input.state.is_none())
        && let Some(r) = input.responses
    {
        params.insert("inputResponses".into(), Value::Object(r.clone()));
    }
}

/// A modern upstream's `InputRequiredResult` as our own round.
fn relay_input_required(result: &Value, cx: &CallContext) -> Result<InputRequired, AdapterError> {
    let mut round = InputRequired::default();
    for (key, r) in result.get("inputRequests").and_then(Value::as_object).into_iter().flatten() {
        let method = r.get("method").and_then(Value::as_str).unwrap_or_default();
        let request = input_request(method, r.get("params").cloned().unwrap_or(Value::Null))?;
        check_capability(&request, cx)?;
        round.requests.insert(key.clone(), request);
    }
    let upstream_state = result.get("requestState");
    if round.requests.is_empty() && upstream_state.is_none() {
        return Err(AdapterError::Backend("the upstream answered input_required with nothing to ask".into()));
    }
    round.state = Some(match upstream_state {
        Some(u) => json!({"m": 1, "u": u}),
        None => json!({"m": 1}),
    });
    Ok(round)
}

/// Reads an upstream question; a 2025-era form elicitation may leave `mode` out.
fn input_request(method: &str, params: Value) -> Result<InputRequest, AdapterError> {
    let mut params = params;
    if method == "elicitation/create"
        && let Some(p) = params.as_object_mut()
    {
        p.entry("mode").or_insert_with(|| json!("form"));
        p.remove("elicitationId");
        p.remove("_meta");
    }
    let value = if params.is_null() { json!({"method": method}) } else { json!({"method": method, "params": params}) };
    serde_json::from_value(value)
        .map_err(|e| AdapterError::Backend(format!("the upstream asked {method} in a form we cannot relay: {e}")))
}

/// MCP 2026-07-28 basic/patterns/mrtr § Input requests: never ask what the caller cannot answer.
fn check_capability(request: &InputRequest, cx: &CallContext) -> Result<(), AdapterError> {
    if request.is_supported_by(&cx.client_capabilities) {
        return Ok(());
    }
    Err(AdapterError::MissingCapability {
        required: request.required_capability(),
        message: "the upstream server needs a client capability this request does not declare".into(),
    })
}

/// Passes an upstream notice of this call on to our caller.
fn notify(cx: &CallContext, method: &str, params: &Value) {
    match method {
        "notifications/progress" => {
            if let Some(progress) = params.get("progress").and_then(Value::as_f64) {
                let total = params.get("total").and_then(Value::as_f64);
                cx.progress(progress, total, params.get("message").and_then(Value::as_str));
            }
        }
        "notifications/message" => {
            let level = params.get("level").and_then(Value::as_str).unwrap_or("info");
            if let Some(level) = LOG_LEVELS.iter().find(|l| **l == level) {
                cx.log(level, params.get("data").cloned().unwrap_or(Value::Null));
            }
        }
        _ => {}
    }
}

/// What an upstream failure means for our caller. `uri`: the resource being read.
pub fn to_error(e: UpstreamError, uri: Option<&str>) -> AdapterError {
    match e {
        UpstreamError::Timeout(d) => AdapterError::Timeout(d),
        UpstreamError::Cancelled => AdapterError::Cancelled,
        UpstreamError::Unreachable(_) | UpstreamError::Failed(_) | UpstreamError::Unauthorized(_) => {
            AdapterError::Backend(e.to_string())
        }
        UpstreamError::Rpc(err) => match (err.code, uri) {
            // Resource not found: -32602 with data.uri (MCP 2026-07-28 server/resources), -32002 before.
            (-32602 | -32002, Some(uri)) => AdapterError::ResourceNotFound(uri.to_owned()),
            (-32602, None) => AdapterError::InvalidArguments { field: None, message: err.message },
            (-32021, _) => AdapterError::MissingCapability {
                required: err.data.as_ref().and_then(|d| d.get("requiredCapabilities")).cloned().unwrap_or(json!({})),
                message: err.message,
            },
            _ => AdapterError::Backend(format!("{} ({})", err.message, err.code)),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcp_adapter_api::protocol::ErrorObject;

    use super::*;

    fn cx(capabilities: Value) -> CallContext {
        CallContext { client_capabilities: capabilities, ..CallContext::detached(Duration::from_secs(1)) }
    }

    #[test]
    fn a_modern_round_is_relayed_with_its_state_inside_ours() {
        let result = json!({"resultType": "input_required", "requestState": "up-1",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}}});
        let round = relay_input_required(&result, &cx(json!({"elicitation": {}}))).unwrap();
        assert_eq!(round.state, Some(json!({"m": 1, "u": "up-1"})));
        assert!(matches!(round.requests["who"], InputRequest::Elicit(_)), "a form without `mode` is a form");

        let refused = relay_input_required(&result, &cx(json!({}))).unwrap_err();
        assert!(matches!(refused, AdapterError::MissingCapability { .. }), "{refused:?}");
        let empty = relay_input_required(&json!({"resultType": "input_required"}), &cx(json!({}))).unwrap_err();
        assert!(matches!(empty, AdapterError::Backend(_)), "{empty:?}");
    }

    #[test]
    fn the_callers_input_reaches_a_modern_upstream_in_first_requests_and_its_rounds() {
        let responses = json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
        let responses = responses.as_object().unwrap();
        let sent = |state: Option<Value>| {
            let mut params = Map::new();
            retry_params(&mut params, Input { responses: Some(responses), state: state.as_ref() });
            Value::Object(params)
        };
        assert_eq!(sent(None), json!({"inputResponses": responses}), "a first request keeps the client's answers");
        assert_eq!(
            sent(Some(json!({"m": 1, "u": "up-1"}))),
            json!({"inputResponses": responses, "requestState": "up-1"}),
            "a modern round gets its own state back"
        );
        assert_eq!(sent(Some(json!({"m": 1}))), json!({"inputResponses": responses}));
        assert_eq!(sent(Some(json!({"a": {}, "k": "upstream-0"}))), json!({}), "a 2025-era round's answers are ours");
        let mut params = Map::new();
        retry_params(&mut params, Input::default());
        assert!(params.is_empty());
    }

    #[test]
    fn upstream_errors_keep_their_meaning() {
        let rpc = |code| UpstreamError::Rpc(ErrorObject { code, message: "m".into(), data: None });
        assert!(matches!(to_error(rpc(-32602), None), AdapterError::InvalidArguments { .. }));
        assert!(
            matches!(to_error(rpc(-32002), Some("file:///x")), AdapterError::ResourceNotFound(u) if u == "file:///x")
        );
        assert!(matches!(to_error(rpc(-32603), None), AdapterError::Backend(_)));
        assert!(matches!(to_error(UpstreamError::Timeout(Duration::from_secs(1)), None), AdapterError::Timeout(_)));
        assert!(
            matches!(to_error(UpstreamError::Failed("gone".into()), None), AdapterError::Backend(m) if m.contains("gone"))
        );
    }
}
