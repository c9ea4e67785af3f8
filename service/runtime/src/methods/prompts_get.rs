//! `prompts/get` (MCP 2026-07-28 server/prompts): string arguments, required ones present (`-32602` otherwise),
//! then the adapter; may answer `input_required`.

use axum::response::Response;
use mcp_adapter_api::{Input, PromptGet};
use serde_json::{Map, Value, json};

use super::invoke::{self, Finisher};
use super::{Ctx, required_str};
use crate::http::stream;
use crate::mrtr::{self, Binding};
use crate::rpc::RpcError;
use crate::rpc::response::{self, ResultObject, ResultType};

const METHOD: &str = "prompts/get";

pub async fn handle(ctx: Ctx<'_>, mut params: Map<String, Value>) -> Result<Response, RpcError> {
    let name = required_str(&params, "name", METHOD)?.to_owned();
    let (prompt, adapter) = ctx.registry.prompt(&name).cloned().ok_or_else(|| {
        RpcError::invalid_params(format!("Unknown prompt: {name}")).with_data(json!({ "name": name }))
    })?;
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(m)) => {
            if let Some((k, _)) = m.iter().find(|(_, v)| !v.is_string()) {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: prompt argument '{k}' must be a string"
                )));
            }
            Value::Object(m)
        }
        Some(_) => {
            return Err(RpcError::invalid_params("Invalid params: arguments must be an object of strings"));
        }
    };
    let args = arguments.as_object().expect("object");
    if let Some(missing) = prompt.arguments.iter().find(|a| a.required && !args.contains_key(&a.name)) {
        return Err(RpcError::invalid_params(format!(
            "Missing required argument '{}' for prompt '{name}'",
            missing.name
        ))
        .with_data(json!({ "field": missing.name })));
    }
    let binding = Binding { method: METHOD, target: &name, arguments: &arguments, principal: ctx.principal() };
    let input = mrtr::take_input(&mut params, &ctx.state.sealer.load(), &binding)?;
    let (cx, notices) = invoke::prepare(&ctx, ctx.registry.call_timeout);
    let finisher = Finisher::new(&ctx, false);
    let streaming = finisher.streaming();
    let call = async move {
        let _cancel_on_drop = cx.cancel.clone().drop_guard();
        let input = Input { responses: input.responses.as_ref(), state: input.state.as_ref() };
        let get = PromptGet { name: &name, arguments: arguments.as_object().expect("object"), input };
        let outcome = invoke::run(&cx, adapter.get_prompt(get, &cx)).await;
        let binding = Binding {
            method: METHOD,
            target: &name,
            arguments: &arguments,
            principal: cx.identity.as_ref().map(|i| &*i.subject),
        };
        finisher.finish(outcome, &cx.client_capabilities, &binding, |result, id, info| {
            response::success(id, &ResultObject::new(ResultType::Complete, &result, info))
        })
    };
    Ok(stream::respond(call, notices, streaming).await)
}
