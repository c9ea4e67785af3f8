//! `tools/call` (MCP 2026-07-28 server/tools): the tool's static capability needs (`-32021`), its
//! `Mcp-Param-*` headers (`-32020`), MRTR input, the runtime's preflight questions and
//! argument validation (`-32602`; left to the backend for `ArgumentCheck::Backend` tools), then
//! the adapter under a deadline, streaming progress when asked, or as a background task when
//! the tool and the request support tasks.

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use mcp_adapter_api::TaskSupport;
use mcp_protocol::capabilities::covers;
use serde_json::{Map, Value};

use super::required_str;
use crate::mrtr;
use crate::mrtr::preflight::{self, Preflight};
use crate::pipeline::{self, Ctx, Plan, Tool};
use crate::registry::tool_schema::HeaderParam;
use crate::rpc::headers;
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::rpc::{Reply, RpcError};
use crate::tasks;

const METHOD: &str = "tools/call";

pub async fn handle(ctx: &Ctx<'_>, mut params: Map<String, Value>) -> Result<Reply, RpcError> {
    let name = required_str(&params, "name", METHOD)?.to_owned();
    if let Some(answer) = super::search::answer(ctx, &name, &params) {
        return answer;
    }
    let entry = match ctx.registry.tool(&name) {
        Some(entry) => Arc::clone(entry),
        // Boxed: a large future, taken only by a caller's own tools (per-caller adapters).
        None => Box::pin(super::per_caller::entry(ctx, &name))
            .await
            .ok_or_else(|| super::list::unknown(ctx, "tools", &name))?,
    };
    let mut arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(RpcError::invalid_params("Invalid params: arguments must be an object")),
    };
    let caps = &ctx.envelope.client_capabilities;
    // Step 13: capabilities this tool always needs, before anything runs (MCP 2026-07-28 basic § Client capabilities; MCP tasks extension § Negotiation and task creation).
    if let Some(need) = &entry.policy.requires_capabilities
        && !covers(caps, need)
    {
        return Err(RpcError::missing_capability(
            format!(
                "Missing required client capability: tool '{name}' needs {need}; declare it in _meta clientCapabilities"
            ),
            need.clone(),
        ));
    }
    let as_task = match entry.policy.task {
        TaskSupport::Never => false,
        TaskSupport::Optional => tasks::require_extension(&ctx.envelope, "").is_ok(),
        TaskSupport::Required => {
            tasks::require_extension(&ctx.envelope, &format!("tool '{name}' runs only as a task and"))?;
            true
        }
    };
    // Step 14: arguments mirrored into headers (2025-era clients send none; nor does a call
    // through `call_tool`, whose routing headers name `call_tool`).
    if !ctx.envelope.legacy && !through_call_tool(ctx) {
        check_param_headers(ctx.headers, &entry.header_params, &arguments)?;
    }
    // A virtual endpoint's fixed arguments, which its clients were not shown.
    if let Some(origin) = &entry.origin {
        origin
            .fix(&mut arguments)
            .map_err(|why| RpcError::invalid_params(format!("Invalid arguments for tool '{name}': {why}")))?;
    }
    let arguments = Value::Object(arguments);
    let binding = ctx.binding(METHOD, &name, &arguments);
    let input = pipeline::input(ctx, &mut params, &binding)?;
    let info = &ctx.registry.server_info;
    let (effective, runtime, adapter_input) = match preflight::check(&entry, &arguments, &input, caps)? {
        Preflight::Ask(required, runtime) => {
            let body = mrtr::interim(required, Some(&runtime), caps, &ctx.state.sealer.load(), &binding, input.round)?;
            let result = ResultObject::new(ResultType::InputRequired, &body, info);
            return Ok(Reply::ok(response::success(ctx.id, &result)));
        }
        Preflight::Refused(result) => {
            let result = ResultObject::new(ResultType::Complete, &result, info);
            return Ok(Reply::ok(response::success(ctx.id, &result)));
        }
        Preflight::Ready { arguments, runtime, adapter_input } => (arguments, runtime, adapter_input),
    };
    let tool = Tool { entry, arguments, effective };
    // Every execution spends rate-limit budget; questions asked before it do not.
    let began = pipeline::limit(ctx, tool.entry.catalog_name(), tool.entry.limits).await?;
    if as_task {
        // MRTR rounds are over; the work runs in the background (MCP 2026-07-28 basic/patterns/mrtr; MCP tasks extension § Negotiation and task creation).
        // Boxed: a large future, taken only by task calls.
        let job = tasks::job(ctx);
        let task =
            Box::pin(tasks::start(&job, &tool.entry, tool.effective().clone(), caps.clone(), ctx.task_owner())).await?;
        let result = ResultObject::new(ResultType::Task, &task, info);
        return Ok(Reply::ok(response::success(ctx.id, &result)));
    }

    // Results of read-only tools marked cacheable, for the same caller and arguments; never
    // those of MRTR rounds (MCP 2026-07-28 basic/patterns/mrtr).
    let first_round = input.responses.is_none() && input.state.is_none() && input.runtime.is_none();
    let cache = tool.entry.policy.cache_ttl_ms.filter(|_| first_round).map(|ttl| {
        let key = format!(
            "tools/call\u{0}{name}\u{0}{}\u{0}{}",
            mrtr::seal::digest_b64(tool.effective()),
            ctx.principal().unwrap_or("")
        );
        (key, Duration::from_millis(ttl))
    });
    let timeout = tool.entry.policy.timeout_ms.map_or(ctx.registry.call_timeout, Duration::from_millis);
    let carry = (runtime.args.is_some() || runtime.confirmed).then_some(runtime);
    let (responses, state) = if adapter_input { (input.responses, input.state) } else { (None, None) };
    let plan = Plan { responses, state, runtime: carry, cache, timeout, began };
    pipeline::invoke(ctx, tool, plan).await
}

/// Whether this call came through search mode's `call_tool` ([`super::unwrap_call`]).
fn through_call_tool(ctx: &Ctx<'_>) -> bool {
    ctx.registry.search.is_some()
        && ctx
            .headers
            .get(&headers::NAME)
            .is_some_and(|n| n.as_bytes() == crate::registry::search::CALL_TOOL.as_bytes())
}

/// `Mcp-Param-*` (MCP 2026-07-28 basic/transports/streamable-http § Request metadata headers): a value in the body needs its header, equal after decoding;
/// an absent or null value needs the header absent.
fn check_param_headers(headers: &HeaderMap, params: &[HeaderParam], args: &Map<String, Value>) -> Result<(), RpcError> {
    for p in params {
        let header = headers::single(headers, &p.header)?;
        match (args.get(&p.property).filter(|v| !v.is_null()), header) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(RpcError::header_mismatch(format!(
                    "Header mismatch: {} is present but arguments.{} is absent; send the header only with the argument",
                    p.display, p.property
                )));
            }
            (Some(_), None) => {
                return Err(RpcError::header_mismatch(format!(
                    "Header mismatch: the {} header is required because arguments.{} is set",
                    p.display, p.property
                )));
            }
            (Some(value), Some(raw)) => {
                let got = headers::decode(raw, &p.display)?;
                if !param_matches(value, &got) {
                    return Err(RpcError::header_mismatch(format!(
                        "Header mismatch: {} header value '{got}' does not match arguments.{}",
                        p.display, p.property
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Strings compare as text, numbers numerically (`42` equals `42.0`), booleans as `true`/`false`.
fn param_matches(value: &Value, header: &str) -> bool {
    match value {
        Value::String(s) => s == header,
        Value::Number(n) => header.parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(h, v)| h == v),
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn param_comparison() {
        assert!(param_matches(&json!("eu"), "eu"));
        assert!(!param_matches(&json!("eu"), "EU"));
        assert!(param_matches(&json!(42), "42.0"));
        assert!(param_matches(&json!(true), "true"));
        assert!(!param_matches(&json!(true), "1"));
    }
}
