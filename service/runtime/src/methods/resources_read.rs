//! `resources/read` (digest l.3): route the URI to the adapter that lists it or whose template
//! matches; unknown URIs are `-32602` with `data.uri`, never empty contents.

use axum::response::Response;
use mcp_adapter_api::{Input, ResourceRead};
use mcp_protocol::{CacheHint, ReadResourceResult};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::invoke::{self, Finisher};
use super::{Ctx, required_str};
use crate::http::stream;
use crate::mrtr::{self, Binding};
use crate::rpc::RpcError;
use crate::rpc::response::{self, ResultObject, ResultType};

const METHOD: &str = "resources/read";

#[derive(Serialize)]
struct Body {
    #[serde(flatten)]
    result: ReadResourceResult,
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
    let input = mrtr::take_input(&mut params, &ctx.state.sealer, &binding)?;
    // Results of MRTR retries are never cached (digest d.8 [DECISION]).
    let hint = if input.responses.is_some() || input.state.is_some() {
        CacheHint::UNCACHEABLE
    } else {
        ctx.registry.caching.resources_read
    };
    let (cx, notices) = invoke::prepare(&ctx, ctx.registry.call_timeout);
    let finisher = Finisher::new(&ctx, false);
    let streaming = finisher.streaming();
    let call = async move {
        let _cancel_on_drop = cx.cancel.clone().drop_guard();
        let input = Input { responses: input.responses.as_ref(), state: input.state.as_ref() };
        let read = ResourceRead { uri: &uri, template_vars: vars.as_ref(), input };
        let outcome = invoke::run(&cx, adapter.read_resource(read, &cx)).await;
        let binding = Binding {
            method: METHOD,
            target: &uri,
            arguments: &Value::Null,
            principal: cx.identity.as_ref().map(|i| &*i.subject),
        };
        finisher.finish(outcome, &cx.client_capabilities, &binding, |result, id, info| {
            response::success(id, &ResultObject::new(ResultType::Complete, &Body { result, hint }, info))
        })
    };
    Ok(stream::respond(call, notices, streaming).await)
}
