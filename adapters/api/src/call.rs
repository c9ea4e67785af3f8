//! Calls into an adapter and their outcomes, including MRTR input rounds (MCP 2026-07-28 basic/patterns/mrtr).

use std::collections::BTreeMap;

use mcp_protocol::CompletionRef;
use mcp_protocol::mrtr::InputRequest;
use serde_json::{Map, Value};

/// Answers from a previous MRTR round (MCP 2026-07-28 basic/patterns/mrtr § Retrying: inputResponses and requestState).
#[derive(Debug, Clone, Copy, Default)]
pub struct Input<'a> {
    /// The client's `inputResponses`, if any. Keys we did not ask for may be present: ignore them.
    pub responses: Option<&'a Map<String, Value>>,
    /// The adapter state from the previous round, verified and decrypted by the runtime.
    pub state: Option<&'a Value>,
}

/// A `tools/call`.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The tool name (already known to belong to this adapter).
    pub name: &'a str,
    /// The arguments, already validated against the tool's input schema, unless the tool's
    /// spec leaves that to the backend ([`crate::ArgumentCheck::Backend`]).
    pub arguments: &'a Map<String, Value>,
    /// Answers from a previous round.
    pub input: Input<'a>,
}

/// A `resources/read`.
#[derive(Debug, Clone, Copy)]
pub struct ResourceRead<'a> {
    /// The requested URI.
    pub uri: &'a str,
    /// Variables when the URI matched one of the adapter's templates.
    pub template_vars: Option<&'a BTreeMap<String, String>>,
    /// Answers from a previous round.
    pub input: Input<'a>,
}

/// A `prompts/get`.
#[derive(Debug, Clone, Copy)]
pub struct PromptGet<'a> {
    /// The prompt name.
    pub name: &'a str,
    /// String arguments.
    pub arguments: &'a Map<String, Value>,
    /// Answers from a previous round.
    pub input: Input<'a>,
}

/// A `completion/complete`.
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    /// What is being completed.
    pub reference: &'a CompletionRef,
    /// The argument name.
    pub argument: &'a str,
    /// What the user typed so far.
    pub value: &'a str,
    /// Other arguments already chosen.
    pub context: Option<&'a Map<String, Value>>,
}

/// What a call produced: the final result, or a request for input (MRTR).
#[derive(Debug, Clone)]
pub enum Outcome<T> {
    /// The final result.
    Complete(T),
    /// Ask the client, then expect a retry carrying the answers and `state`.
    InputRequired(InputRequired),
}

/// An interim answer: input requests keyed by adapter-chosen names, plus state to carry.
/// At least one of the two must be present (MCP 2026-07-28 basic/patterns/mrtr § InputRequiredResult).
#[derive(Debug, Clone, Default)]
pub struct InputRequired {
    /// What to ask, by key.
    pub requests: BTreeMap<String, InputRequest>,
    /// Adapter state handed back on the retry. The runtime seals it: the client cannot read
    /// or change it. Keep it small: it crosses the network twice per round.
    pub state: Option<Value>,
}

impl InputRequired {
    /// One input request, no state.
    pub fn ask(key: impl Into<String>, request: InputRequest) -> Self {
        let mut requests = BTreeMap::new();
        requests.insert(key.into(), request);
        Self { requests, state: None }
    }

    /// Adds another input request.
    pub fn and(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.insert(key.into(), request);
        self
    }

    /// Attaches state.
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }
}
