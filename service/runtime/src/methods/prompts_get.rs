//! `prompts/get` (MCP 2026-07-28 server/prompts): string arguments, required ones present (`-32602` otherwise),
//! then the adapter; may answer `input_required`.

use serde_json::{Map, Value, json};

use super::required_str;
use crate::pipeline::{self, Ctx, Plan, Prompt};
use crate::rpc::{Reply, RpcError};

const METHOD: &str = "prompts/get";

pub async fn handle(ctx: &Ctx<'_>, mut params: Map<String, Value>) -> Result<Reply, RpcError> {
    let name = required_str(&params, "name", METHOD)?.to_owned();
    let (prompt, adapter) =
        ctx.registry.prompt(&name).cloned().ok_or_else(|| super::list::unknown(ctx, "prompts", &name))?;
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
    let binding = ctx.binding(METHOD, &name, &arguments);
    let input = pipeline::input(ctx, &mut params, &binding)?;
    let plan =
        Plan { responses: input.responses, state: input.state, timeout: ctx.registry.call_timeout, ..Plan::default() };
    pipeline::invoke(ctx, Prompt { adapter, name, arguments }, plan).await
}
