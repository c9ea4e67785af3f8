//! `completion/complete` (MCP 2026-07-28 server/utilities/completion): suggestions for a prompt argument or a template
//! variable, from the adapter that owns it; at most 100 values.

use mcp_adapter_api::Completion;
use mcp_protocol::CompletionRef;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::pipeline::{self, Ctx};
use crate::rpc::error::{Failure, from_adapter};
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::rpc::{Reply, RpcError};

const MAX_VALUES: usize = 100;

#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

#[derive(Serialize)]
struct Body {
    completion: mcp_protocol::Completion,
}

pub async fn handle(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    let invalid = |what: &str| RpcError::invalid_params(format!("Invalid params: completion/complete needs {what}"));
    let reference = params
        .get("ref")
        .and_then(|r| CompletionRef::deserialize(r).ok())
        .ok_or_else(|| invalid("ref as {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}"))?;
    let argument = params
        .get("argument")
        .and_then(|a| Argument::deserialize(a).ok())
        .ok_or_else(|| invalid("argument as {name, value} strings"))?;
    let context = params.get("context").and_then(|c| c.get("arguments")).and_then(Value::as_object);
    let adapter = match &reference {
        CompletionRef::Prompt { name } => ctx.registry.prompt(name).map(|(_, a)| a.clone()),
        CompletionRef::Resource { uri } => {
            ctx.registry.template_adapter(uri).or_else(|| ctx.registry.resource(uri).map(|(a, _)| a)).cloned()
        }
    }
    .ok_or_else(|| {
        RpcError::invalid_params("Invalid params: ref names no prompt or resource template of this server")
    })?;
    let budget = ctx.registry.call_timeout;
    let (cx, _) = pipeline::prepare(ctx, budget, tokio::time::Instant::now());
    let request = Completion { reference: &reference, argument: &argument.name, value: &argument.value, context };
    let call = async { adapter.complete(request, &cx).await.map(mcp_adapter_api::Outcome::Complete) };
    let mut completion = match pipeline::run(&cx, call, budget).await {
        Ok(mcp_adapter_api::Outcome::Complete(c)) => c,
        Ok(mcp_adapter_api::Outcome::InputRequired(_)) => {
            unreachable!("completion never asks for input")
        }
        Err(e) => {
            return Err(match from_adapter(e, false, None) {
                Failure::Rpc(e) => e,
                Failure::ToolError(_) => RpcError::internal("completion produced a tool error"),
            });
        }
    };
    if completion.values.len() > MAX_VALUES {
        completion.total = Some(completion.total.unwrap_or(completion.values.len() as u64));
        completion.values.truncate(MAX_VALUES);
        completion.has_more = Some(true);
    }
    let body = Body { completion };
    Ok(Reply::ok(response::success(ctx.id, &ResultObject::new(ResultType::Complete, &body, &ctx.registry.server_info))))
}
