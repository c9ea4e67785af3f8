//! `resources/read` (MCP 2026-07-28 server/resources): route the URI to the adapter that lists it or whose template
//! matches; unknown URIs are `-32602` with `data.uri`, never empty contents.

use axum::response::Response;
use std::time::Duration;

use axum::http::StatusCode;
use mcp_adapter_api::{Input, Outcome, ResourceRead};
use mcp_protocol::{CacheHint, CacheScope, ReadResourceResult};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::invoke::{self, Finisher};
use super::{Ctx, required_str};
use crate::http::{reply, stream};
use crate::mrtr::{self, Binding};
use crate::rpc::RpcError;
use crate::rpc::response::{self, ResultObject, ResultType};

const METHOD: &str = "resources/read";

#[derive(Serialize)]
struct Body<'a> {
    #[serde(flatten)]
    result: &'a ReadResourceResult,
    #[serde(flatten)]
    hint: CacheHint,
}

pub async fn handle(ctx: Ctx<'_>, mut params: Map<String, Value>) -> Result<Response, RpcError> {
    let uri = required_str(&params, "uri", METHOD)?.to_owned();
    let (adapter, vars) = ctx
        .registry
        .resource(&uri)
        .map(|(a, vars)| (a.clone(), vars))
        .ok_or_else(|| RpcError::invalid_params("Resource not found").with_data(json!({ "uri": uri })))?;
    let binding = Binding { method: METHOD, target: &uri, arguments: &Value::Null, principal: ctx.principal() };
    let input = mrtr::take_input(&mut params, &ctx.state.sealer.load(), &binding)?;
    // Results of MRTR retries are never cached (MCP 2026-07-28 basic/patterns/mrtr, our choice where the spec leaves it open).
    let hint = if input.responses.is_some() || input.state.is_some() {
        CacheHint::UNCACHEABLE
    } else {
        ctx.registry.caching.resources_read
    };
    // Reads are cached for the same TTL the client is told (MCP 2026-07-28 server/utilities/caching); a private one per caller.
    let cache_key = (hint.ttl_ms > 0).then(|| {
        let caller = if hint.cache_scope == CacheScope::Private { ctx.principal().unwrap_or("") } else { "" };
        format!("resources/read\u{0}{uri}\u{0}{caller}")
    });
    if let Some(key) = &cache_key
        && let Some(body) = ctx.state.cache.get(key).await
    {
        return Ok(reply::json(StatusCode::OK, response::success(ctx.id, &*super::tools_call::raw(&body)?)));
    }
    let (cx, notices) = invoke::prepare(&ctx, ctx.registry.call_timeout);
    let finisher = Finisher::new(&ctx, false);
    let streaming = finisher.streaming();
    let app = std::sync::Arc::clone(ctx.state);
    let call = async move {
        let _cancel_on_drop = cx.cancel.clone().drop_guard();
        let input = Input { responses: input.responses.as_ref(), state: input.state.as_ref() };
        let read = ResourceRead { uri: &uri, template_vars: vars.as_ref(), input };
        let outcome = invoke::run(&cx, adapter.read_resource(read, &cx)).await;
        if let (Some(key), Ok(Outcome::Complete(result))) = (&cache_key, &outcome) {
            let body = Body { result, hint };
            let bytes = serde_json::to_vec(&ResultObject::new(ResultType::Complete, &body, finisher.server_info()))
                .expect("serializable result");
            app.cache.put(key, bytes.into(), Duration::from_millis(hint.ttl_ms)).await;
        }
        let binding = Binding {
            method: METHOD,
            target: &uri,
            arguments: &Value::Null,
            principal: cx.identity.as_ref().map(|i| &*i.subject),
        };
        finisher.finish(outcome, &cx.client_capabilities, &binding, |result, id, info| {
            response::success(id, &ResultObject::new(ResultType::Complete, &Body { result: &result, hint }, info))
        })
    };
    Ok(stream::respond(call, notices, streaming).await)
}
