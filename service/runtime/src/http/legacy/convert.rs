//! Modern answers in 2025-11-25 shapes: no `resultType`/`ttlMs`/`cacheScope`, `-32002` for a missing resource, missing capabilities as tool errors.

use serde_json::{Map, Value, json};

/// `-32002`: resource not found (MCP 2025-11-25 server/resources § Error Handling).
const RESOURCE_NOT_FOUND: i64 = -32002;

/// A final message, or an interim result asking the client for input.
#[derive(Debug)]
pub enum Converted {
    /// The message to send.
    Done(Vec<u8>),
    /// An `input_required` result (without `resultType`): its `inputRequests` and `requestState`.
    Ask(Map<String, Value>),
}

/// Converts one response message of the modern pipeline (`tool_call`: errors of a tool become tool errors).
pub fn message(body: &[u8], tool_call: bool) -> Converted {
    let Ok(Value::Object(mut msg)) = serde_json::from_slice::<Value>(body) else {
        return Converted::Done(body.to_vec());
    };
    if let Some(Value::Object(result)) = msg.get_mut("result") {
        let kind = result.remove("resultType");
        result.remove("ttlMs");
        result.remove("cacheScope");
        if kind.as_ref().and_then(Value::as_str) == Some("input_required") {
            return Converted::Ask(std::mem::take(result));
        }
    } else if let Some(Value::Object(error)) = msg.get_mut("error") {
        let code = error.get("code").and_then(Value::as_i64);
        if code == Some(-32602)
            && error.get("message").and_then(Value::as_str) == Some("Resource not found")
            && error.get("data").and_then(|d| d.get("uri")).is_some()
        {
            error.insert("code".into(), json!(RESOURCE_NOT_FOUND));
        } else if code == Some(-32021) && tool_call {
            let needs: Vec<String> = error
                .get("data")
                .and_then(|d| d.get("requiredCapabilities"))
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let text = missing(&needs.join(", "));
            msg.remove("error");
            msg.insert("result".into(), tool_error(&text));
        }
    }
    Converted::Done(serde_json::to_vec(&msg).expect("serializable message"))
}

/// What a client without a capability is told.
pub fn missing(needs: &str) -> String {
    format!(
        "This tool needs the client capability '{needs}', which this client did not declare in initialize; it cannot run here"
    )
}

/// A `CallToolResult` with `isError: true`.
pub fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let done = |b: &str, tool| match message(b.as_bytes(), tool) {
            Converted::Done(b) => serde_json::from_slice::<Value>(&b).unwrap(),
            Converted::Ask(_) => panic!("asked"),
        };
        let r = done(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":5,"cacheScope":"x","tools":[]}}"#,
            false,
        );
        assert_eq!(r["result"], json!({"tools": []}));
        let e = done(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"a://b"}}}"#,
            false,
        );
        assert_eq!(e["error"]["code"], -32002);
        let t = done(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m","data":{"requiredCapabilities":{"sampling":{}}}}}"#,
            true,
        );
        assert_eq!(t["result"]["isError"], true);
        assert!(t["result"]["content"][0]["text"].as_str().unwrap().contains("'sampling'"));
        let ask =
            message(br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#, true);
        assert!(matches!(ask, Converted::Ask(m) if m.contains_key("inputRequests")));
    }
}
