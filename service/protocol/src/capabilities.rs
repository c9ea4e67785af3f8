//! Client capabilities are per request (MCP 2026-07-28 basic § Client capabilities): does what a request declared cover
//! what an operation needs?

use serde_json::Value;

/// True when the declared `have` (`clientCapabilities`) covers `need` (a `ClientCapabilities`
/// object such as `{"elicitation":{"form":{}}}`): every key of `need` is present in `have`,
/// recursively for non-empty objects. A bare `elicitation: {}` counts as form mode (MCP 2026-07-28 basic § Request metadata (_meta)).
pub fn covers(have: &Value, need: &Value) -> bool {
    let Some(need) = need.as_object() else {
        return true;
    };
    need.iter().all(|(key, sub)| match have.get(key) {
        None | Some(Value::Null) => false,
        Some(got) => {
            let bare = got.as_object().is_some_and(|o| o.is_empty());
            if key == "elicitation" && bare {
                // `{}` means form mode only.
                sub.as_object().is_none_or(|s| s.keys().all(|k| k == "form"))
            } else {
                covers(got, sub)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coverage() {
        assert!(covers(&json!({"sampling": {}}), &json!({"sampling": {}})));
        assert!(!covers(&json!({}), &json!({"sampling": {}})));
        assert!(covers(&json!({"elicitation": {}}), &json!({"elicitation": {"form": {}}})));
        assert!(!covers(&json!({"elicitation": {}}), &json!({"elicitation": {"url": {}}})));
        assert!(covers(&json!({"elicitation": {"url": {}, "form": {}}}), &json!({"elicitation": {"url": {}}})));
        assert!(!covers(&json!({"elicitation": {"url": {}}}), &json!({"elicitation": {"form": {}}})));
        assert!(covers(
            &json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
            &json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        ));
        assert!(!covers(&json!({"sampling": {}}), &json!({"sampling": {"tools": {}}})));
    }
}
