//! Request building: one call's argv (from the template) and stdin (from an argument).

use mcp_adapter_api::AdapterError;
use serde_json::{Map, Value};

use crate::tool::Tool;

/// What one run gets from the call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// argv after the program.
    pub args: Vec<String>,
    /// stdin bytes when the tool reads stdin (empty when the argument is absent).
    pub stdin: Option<Vec<u8>>,
}

impl Request {
    /// Builds the request; refusals name the argument (`-32602`). The runtime has already
    /// checked the arguments against the input schema.
    pub fn build(tool: &Tool, arguments: &Map<String, Value>) -> Result<Self, AdapterError> {
        let args = tool.template.render(arguments, &tool.allow_leading_dash)?;
        let stdin = tool.stdin.as_ref().map(|name| match arguments.get(name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => s.clone().into_bytes(),
            Some(other) => other.to_string().into_bytes(),
        });
        Ok(Self { args, stdin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ToolConfig;
    use serde_json::{Value, json};

    #[test]
    fn argv_and_stdin_come_from_the_arguments() {
        let c: ToolConfig = serde_json::from_value(json!({
            "name": "wc", "description": "d", "executable": "/usr/bin/env",
            "input_schema": {"type": "object", "properties": {"text": {}, "lines": {"type": "boolean"}}},
            "args": [{"if": "lines", "then": ["-l"]}], "stdin": "text",
        }))
        .unwrap();
        let tool = Tool::build(&c, "tools.wc", &|_| None).unwrap();
        let build = |args: Value| Request::build(&tool, args.as_object().unwrap()).unwrap();
        assert_eq!(
            build(json!({"text": "a b", "lines": true})),
            Request { args: vec!["-l".into()], stdin: Some(b"a b".to_vec()) }
        );
        assert_eq!(build(json!({"text": {"k": 1}})).stdin, Some(br#"{"k":1}"#.to_vec()));
        assert_eq!(build(json!({})), Request { args: vec![], stdin: Some(vec![]) });
    }
}
