//! What a call calls: a tool, a resource or a prompt ([`Target`]), with what the pipeline
//! needs to know about each (the adapter call, the check of its result, how the result
//! renders and caches, what binds the sealed `requestState`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_adapter_api::{Adapter, AdapterError, CallContext, Input, Outcome, PromptGet, ResourceRead, ToolCall};
use mcp_protocol::{CacheHint, CallToolResult, GetPromptResult, ReadResourceResult, RequestId};
use serde::Serialize;
use serde_json::Value;

use crate::registry::ToolEntry;
use crate::rpc::response::{self, ResultObject, ResultType, ServerInfo};

/// One kind of call. Implementations own what the call needs, so the call can outlive the
/// handler as a stream or a background task.
pub trait Target: Send + Sync + 'static {
    /// A complete result.
    type Output: Send + 'static;
    /// The method (binds sealed state).
    const METHOD: &'static str;
    /// Adapter failures a model can act on become tool results with `isError` (tools only).
    const TOOL: bool = false;

    /// The tool, prompt or URI (binds sealed state).
    fn name(&self) -> &str;
    /// The arguments as the client sent them (binds sealed state).
    fn arguments(&self) -> &Value;
    /// The adapter call.
    fn call<'a>(
        &'a self,
        input: Input<'a>,
        cx: &'a CallContext,
    ) -> impl Future<Output = Result<Outcome<Self::Output>, AdapterError>> + Send + 'a;
    /// Checks (and may replace) a complete result before anyone sees it.
    fn check(&self, _result: &mut Self::Output) {}
    /// The `[[upstream_auth]]` whose caller's token the adapter's calls carry (`user_auth`).
    fn user_auth(&self) -> Option<&str> {
        None
    }
    /// The answer when the call cannot go on, `text` saying why and what to do: a tool error
    /// for a tool (the model reads it), an error otherwise.
    fn refusal(&self, text: String) -> Result<Outcome<Self::Output>, AdapterError> {
        Err(AdapterError::Backend(text))
    }
    /// The result as the cache keeps it; `None` when it must not be cached.
    fn cached(&self, result: &Self::Output, server_info: &ServerInfo) -> Option<Vec<u8>>;
    /// The final response to request `id`.
    fn render(&self, result: Self::Output, id: &RequestId, server_info: &ServerInfo) -> Vec<u8>;
}

/// `tools/call` (MCP 2026-07-28 server/tools), and each round of a task.
pub struct Tool {
    /// The tool.
    pub entry: Arc<ToolEntry>,
    /// The arguments as sent (`Null` in a task round, which binds no state).
    pub arguments: Value,
    /// The arguments the adapter gets when they are not `arguments` (completed by
    /// elicitation, or a task round's): an object.
    pub effective: Option<Value>,
}

impl Tool {
    /// The arguments the adapter gets (validated): an object.
    pub fn effective(&self) -> &Value {
        self.effective.as_ref().unwrap_or(&self.arguments)
    }
}

impl Target for Tool {
    type Output = CallToolResult;
    const METHOD: &'static str = "tools/call";
    const TOOL: bool = true;

    fn name(&self) -> &str {
        &self.entry.tool.name
    }

    fn arguments(&self) -> &Value {
        &self.arguments
    }

    fn call<'a>(
        &'a self,
        input: Input<'a>,
        cx: &'a CallContext,
    ) -> impl Future<Output = Result<Outcome<CallToolResult>, AdapterError>> + Send + 'a {
        let arguments = self.effective().as_object().expect("validated object");
        self.entry.adapter.call_tool(ToolCall { name: self.entry.catalog_name(), arguments, input }, cx)
    }

    fn check(&self, result: &mut CallToolResult) {
        check_output(&self.entry, result);
    }

    fn user_auth(&self) -> Option<&str> {
        self.entry.user_auth.as_deref()
    }

    fn refusal(&self, text: String) -> Result<Outcome<CallToolResult>, AdapterError> {
        Ok(Outcome::Complete(CallToolResult::error(text)))
    }

    fn cached(&self, result: &CallToolResult, server_info: &ServerInfo) -> Option<Vec<u8>> {
        (!result.is_error).then(|| {
            serde_json::to_vec(&ResultObject::new(ResultType::Complete, result, server_info))
                .expect("serializable result")
        })
    }

    fn render(&self, mut result: CallToolResult, id: &RequestId, server_info: &ServerInfo) -> Vec<u8> {
        let meta = result.meta.take();
        response::success(id, &ResultObject::new(ResultType::Complete, &result, server_info).with_meta(meta.as_ref()))
    }
}

/// A tool with an `outputSchema` must return matching `structuredContent` (MCP 2026-07-28 server/tools: a
/// server MUST); when an adapter does not, the model gets a tool error saying so instead of
/// data its client would reject.
fn check_output(entry: &ToolEntry, result: &mut CallToolResult) {
    let Some(validator) = &entry.output_validator else { return };
    if result.is_error {
        return;
    }
    let problem = match (&result.structured_content, validator.get()) {
        (None, _) => "it returned no structuredContent although it declares an outputSchema".to_owned(),
        (Some(_), Err(e)) => e.to_owned(),
        (Some(v), Ok(validator)) => match validator.validate(v) {
            Ok(()) => return,
            Err(e) => format!("its structuredContent does not match its outputSchema: {e}"),
        },
    };
    tracing::warn!("gen_ai.tool.name" = %entry.tool.name, error = %problem, "tool result refused");
    *result = CallToolResult::error(format!("Tool '{}' failed: {problem}", entry.tool.name));
}

/// `resources/read` (MCP 2026-07-28 server/resources).
pub struct Resource {
    /// The adapter that lists the URI or whose template matches it.
    pub adapter: Arc<dyn Adapter>,
    /// The URI.
    pub uri: String,
    /// The template's variables, when a template matched.
    pub vars: Option<BTreeMap<String, String>>,
    /// The cache hint the result carries (MCP 2026-07-28 server/utilities/caching).
    pub hint: CacheHint,
}

/// A read result with its cache hint.
#[derive(Serialize)]
struct ResourceBody<'a> {
    #[serde(flatten)]
    result: &'a ReadResourceResult,
    #[serde(flatten)]
    hint: CacheHint,
}

impl Target for Resource {
    type Output = ReadResourceResult;
    const METHOD: &'static str = "resources/read";

    fn name(&self) -> &str {
        &self.uri
    }

    fn arguments(&self) -> &Value {
        &Value::Null
    }

    fn call<'a>(
        &'a self,
        input: Input<'a>,
        cx: &'a CallContext,
    ) -> impl Future<Output = Result<Outcome<ReadResourceResult>, AdapterError>> + Send + 'a {
        self.adapter.read_resource(ResourceRead { uri: &self.uri, template_vars: self.vars.as_ref(), input }, cx)
    }

    fn cached(&self, result: &ReadResourceResult, server_info: &ServerInfo) -> Option<Vec<u8>> {
        let body = ResourceBody { result, hint: self.hint };
        Some(
            serde_json::to_vec(&ResultObject::new(ResultType::Complete, &body, server_info))
                .expect("serializable result"),
        )
    }

    fn render(&self, result: ReadResourceResult, id: &RequestId, server_info: &ServerInfo) -> Vec<u8> {
        let body = ResourceBody { result: &result, hint: self.hint };
        response::success(id, &ResultObject::new(ResultType::Complete, &body, server_info))
    }
}

/// `prompts/get` (MCP 2026-07-28 server/prompts).
pub struct Prompt {
    /// The adapter that lists the prompt.
    pub adapter: Arc<dyn Adapter>,
    /// The prompt.
    pub name: String,
    /// Its string arguments: an object.
    pub arguments: Value,
}

impl Target for Prompt {
    type Output = GetPromptResult;
    const METHOD: &'static str = "prompts/get";

    fn name(&self) -> &str {
        &self.name
    }

    fn arguments(&self) -> &Value {
        &self.arguments
    }

    fn call<'a>(
        &'a self,
        input: Input<'a>,
        cx: &'a CallContext,
    ) -> impl Future<Output = Result<Outcome<GetPromptResult>, AdapterError>> + Send + 'a {
        let arguments = self.arguments.as_object().expect("object");
        self.adapter.get_prompt(PromptGet { name: &self.name, arguments, input }, cx)
    }

    fn cached(&self, _: &GetPromptResult, _: &ServerInfo) -> Option<Vec<u8>> {
        None
    }

    fn render(&self, result: GetPromptResult, id: &RequestId, server_info: &ServerInfo) -> Vec<u8> {
        response::success(id, &ResultObject::new(ResultType::Complete, &result, server_info))
    }
}
