//! Request building: one call's argv (from the template), stdin (from an argument), and the
//! path arguments opened beneath their roots.

use std::os::fd::OwnedFd;

use mcp_adapter_api::AdapterError;
use serde_json::{Map, Value};

use crate::confine::{self, Confinement};
use crate::template::PathSlot;
use crate::tool::Tool;

/// What one run gets from the call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// argv after the program.
    pub args: Vec<String>,
    /// stdin bytes when the tool reads stdin (empty when the argument is absent).
    pub stdin: Option<Vec<u8>>,
    /// Where path arguments sit in `args` (still as the caller gave them).
    pub paths: Vec<PathSlot>,
}

impl Request {
    /// Builds the request; refusals name the argument (`-32602`). The runtime has already
    /// checked the arguments against the input schema.
    pub fn build(tool: &Tool, arguments: &Map<String, Value>) -> Result<Self, AdapterError> {
        let confinement = &tool.confinement;
        let (args, paths) =
            tool.template.render_paths(arguments, &tool.allow_leading_dash, &|name| confinement.is_path(name))?;
        let stdin = tool.stdin.as_ref().map(|name| match arguments.get(name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => s.clone().into_bytes(),
            Some(other) => other.to_string().into_bytes(),
        });
        Ok(Self { args, stdin, paths })
    }

    /// Opens every path argument beneath its roots and puts the name of its descriptor in the
    /// program (`/proc/self/fd/3`, `4`, ... in order) in its place. The error is the tool
    /// error's text (the first refused value).
    pub fn open_paths(&mut self, confinement: &Confinement) -> Result<Vec<OwnedFd>, String> {
        if self.paths.len() > confine::MAX_PATHS {
            return Err(format!(
                "This call names {} paths; a call may name at most {}.",
                self.paths.len(),
                confine::MAX_PATHS
            ));
        }
        let mut handles = Vec::with_capacity(self.paths.len());
        for (i, slot) in self.paths.iter().enumerate() {
            let entry = &mut self.args[slot.entry];
            handles.push(confinement.open(&slot.arg, &slot.field, &entry[slot.at..])?);
            let fd = confine::FIRST_FD + i32::try_from(i).expect("at most MAX_PATHS");
            entry.replace_range(slot.at.., &confine::handle_path(fd));
        }
        Ok(handles)
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
        let tool = Tool::build(&c, "tools.wc", &|_| None, false).unwrap();
        let build = |args: Value| Request::build(&tool, args.as_object().unwrap()).unwrap();
        assert_eq!(
            build(json!({"text": "a b", "lines": true})),
            Request { args: vec!["-l".into()], stdin: Some(b"a b".to_vec()), paths: vec![] }
        );
        assert_eq!(build(json!({"text": {"k": 1}})).stdin, Some(br#"{"k":1}"#.to_vec()));
        assert_eq!(build(json!({})), Request { args: vec![], stdin: Some(vec![]), paths: vec![] });
    }
}
