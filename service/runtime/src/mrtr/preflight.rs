//! Questions the runtime asks before a tool runs, for every adapter kind (issue: MRTR where
//! users feel it): missing required arguments through a form built from the input schema
//! (`elicit_missing_arguments`), and confirmation of a tool marked `confirm`. Both travel as
//! ordinary MRTR rounds (MCP 2026-07-28 basic/patterns/mrtr), so they work across replicas like any other round.

use std::borrow::Cow;

use mcp_adapter_api::{ArgumentCheck, InputRequired};
use mcp_protocol::CallToolResult;
use mcp_protocol::mrtr::{ElicitAction, InputRequest, elicit_response};
use serde_json::{Map, Value, json};

use super::{Asker, RoundInput, RuntimeState};
use crate::registry::ToolEntry;
use crate::registry::tool_schema::{elicitation_form, missing_required, validate};
use crate::rpc::{Kind, RpcError};

/// `inputRequests` key for missing arguments.
pub const MISSING_KEY: &str = "missing_arguments";
/// `inputRequests` key for the confirmation.
pub const CONFIRM_KEY: &str = "confirm_tool_call";

/// What happens next.
#[derive(Debug)]
pub enum Preflight {
    /// Run the tool with these (validated) arguments.
    Ready {
        /// The effective arguments, when they are not the client's as sent (completed by
        /// elicitation, in this round or an earlier one).
        arguments: Option<Value>,
        /// State to carry into later rounds.
        runtime: RuntimeState,
        /// Whether this round's answers and state belong to the adapter.
        adapter_input: bool,
    },
    /// Ask the client first.
    Ask(InputRequired, RuntimeState),
    /// The user said no: a tool error the model can read.
    Refused(CallToolResult),
}

/// Decides, for `tool` called with `client_args`, whether to ask, refuse or run.
pub fn check(
    tool: &ToolEntry,
    client_args: &Value,
    input: &RoundInput,
    capabilities: &Value,
) -> Result<Preflight, RpcError> {
    let name = &tool.tool.name;
    let sealed = input.runtime.is_some();
    let mut rt = input.runtime.clone().unwrap_or_default();
    let runtime_asked = sealed && rt.asked == Asker::Runtime;
    // The client's arguments are borrowed, not copied, unless elicitation completes them.
    let mut args = rt.args.clone().map_or(Cow::Borrowed(client_args), Cow::Owned);
    // A backend that checks arguments itself answers bad ones in its own words (an MCP
    // upstream: a tool result with `isError: true` the model can read, MCP 2025-11-25
    // server/tools § Error Handling); the runtime only asks for missing ones, when told to.
    let by_backend = tool.arguments == ArgumentCheck::Backend;
    if !by_backend || tool.policy.elicit_missing_arguments {
        let validator = tool
            .validator
            .get()
            .map_err(|e| RpcError::new(Kind::Internal, format!("Tool '{name}' cannot check its arguments: {e}")))?;
        'check: {
            let Err((field, message)) = validate(validator, &args, name) else { break 'check };
            let invalid = || RpcError::invalid_params(message.clone()).with_data(json!({ "field": field }));
            let missing = tool.policy.elicit_missing_arguments.then(|| missing_required(validator, &args)).flatten();
            let form = missing.and_then(|m| Some((elicitation_form(&tool.tool.input_schema, &m)?, m)));
            let Some((form, missing)) = form else {
                if by_backend {
                    break 'check;
                }
                return Err(invalid());
            };
            match elicit_response(input.responses.as_ref(), MISSING_KEY) {
                Some((ElicitAction::Accept, Some(content))) => {
                    let obj = args.to_mut().as_object_mut().expect("arguments are an object");
                    for key in &missing {
                        if let Some(v) = content.get(key) {
                            obj.insert(key.clone(), v.clone());
                        }
                    }
                    if let Err((field, message)) = validate(validator, &args, name)
                        && !by_backend
                    {
                        return Err(RpcError::invalid_params(message).with_data(json!({ "field": field })));
                    }
                    rt.args = Some(args.clone().into_owned());
                }
                Some(_) => {
                    return Ok(Preflight::Refused(CallToolResult::error(format!(
                        "The user did not provide the missing arguments ({}) for tool '{name}'",
                        missing.join(", ")
                    ))));
                }
                None => {
                    let request = InputRequest::form(format!("Tool '{name}' needs: {}", missing.join(", ")), form);
                    if !request.is_supported_by(capabilities) {
                        if by_backend {
                            break 'check;
                        }
                        return Err(invalid());
                    }
                    rt.asked = Asker::Runtime;
                    return Ok(Preflight::Ask(InputRequired::ask(MISSING_KEY, request), rt));
                }
            }
        }
    }

    if tool.policy.confirm && !rt.confirmed {
        // Only an answer to a question we sealed counts: a client cannot pre-confirm.
        match elicit_response(input.responses.as_ref(), CONFIRM_KEY).filter(|_| runtime_asked) {
            Some((ElicitAction::Accept, Some(c))) if c.get("confirm") == Some(&Value::Bool(true)) => {
                rt.confirmed = true;
            }
            Some(_) => {
                return Ok(Preflight::Refused(CallToolResult::error(format!(
                    "The user declined to run tool '{name}'"
                ))));
            }
            None => {
                let request = confirm_request(name, &args);
                if !request.is_supported_by(capabilities) {
                    return Err(RpcError::missing_capability(
                        format!(
                            "Missing required client capability: tool '{name}' must be confirmed by the user through form elicitation"
                        ),
                        request.required_capability(),
                    ));
                }
                rt.asked = Asker::Runtime;
                return Ok(Preflight::Ask(InputRequired::ask(CONFIRM_KEY, request), rt));
            }
        }
    }

    let adapter_input = !runtime_asked;
    rt.asked = Asker::Adapter;
    let arguments = match args {
        Cow::Owned(completed) => Some(completed),
        Cow::Borrowed(_) => None,
    };
    Ok(Preflight::Ready { arguments, runtime: rt, adapter_input })
}

fn confirm_request(name: &str, args: &Value) -> InputRequest {
    let mut shown = args.to_string();
    if shown.len() > 500 {
        let cut = (0..=500).rev().find(|i| shown.is_char_boundary(*i)).unwrap_or(0);
        shown.truncate(cut);
        shown.push('…');
    }
    let mut props = Map::new();
    props.insert("confirm".into(), json!({"type": "boolean", "title": format!("Run {name}?")}));
    InputRequest::form(
        format!("Allow the tool '{name}' to run with arguments {shown}?"),
        json!({"type": "object", "properties": props, "required": ["confirm"]}),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_adapter_api::{Adapter, AdapterError, CallContext, Catalog, Outcome, ToolCall, ToolPolicy, async_trait};
    use mcp_protocol::Tool;

    use super::*;
    use crate::registry::tool_schema::Validators;

    /// Preflight never runs the tool.
    struct NoBackend;

    #[async_trait]
    impl Adapter for NoBackend {
        fn catalog(&self) -> Catalog {
            Catalog::default()
        }

        async fn call_tool(&self, _: ToolCall<'_>, _: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
            unreachable!("preflight runs no tool")
        }
    }

    fn echo(arguments: ArgumentCheck, elicit_missing_arguments: bool) -> ToolEntry {
        let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
        let tool: Tool = serde_json::from_value(json!({"name": "echo", "inputSchema": schema})).unwrap();
        ToolEntry {
            validator: Validators::default().input(&tool.input_schema).unwrap(),
            tool,
            policy: ToolPolicy { elicit_missing_arguments, ..ToolPolicy::default() },
            arguments,
            adapter: Arc::new(NoBackend),
            adapter_name: Arc::from("test"),
            output_validator: None,
            header_params: Vec::new(),
            limits: Default::default(),
            origin: None,
            user_auth: None,
        }
    }

    fn run(tool: &ToolEntry, args: Value, capabilities: Value) -> Result<Preflight, RpcError> {
        check(tool, &args, &RoundInput::default(), &capabilities)
    }

    #[test]
    fn bad_arguments_are_refused_here_unless_the_backend_checks_them() {
        let refused = run(&echo(ArgumentCheck::Runtime, false), json!({"message": 1}), json!({})).unwrap_err();
        assert_eq!((refused.kind, refused.data), (Kind::InvalidParams, Some(json!({"field": "message"}))));

        let backend = echo(ArgumentCheck::Backend, false);
        for args in [json!({}), json!({"message": 1})] {
            let ready = run(&backend, args.clone(), json!({"elicitation": {}}));
            assert!(matches!(ready, Ok(Preflight::Ready { arguments: None, adapter_input: true, .. })), "{args}");
        }
    }

    #[test]
    fn a_backend_checked_tool_still_gets_its_missing_arguments_asked_for_when_told() {
        let tool = echo(ArgumentCheck::Backend, true);
        let asked = run(&tool, json!({}), json!({"elicitation": {}}));
        assert!(matches!(asked, Ok(Preflight::Ask(ref r, _)) if r.requests.contains_key(MISSING_KEY)), "{asked:?}");
        // A client that cannot answer a form: the backend answers instead of our -32602.
        assert!(matches!(run(&tool, json!({}), json!({})), Ok(Preflight::Ready { .. })));
        // Wrong, not missing: nothing to ask, the backend answers.
        assert!(matches!(run(&tool, json!({"message": 1}), json!({"elicitation": {}})), Ok(Preflight::Ready { .. })));
    }
}
