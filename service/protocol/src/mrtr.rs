//! Multi round-trip requests (MCP 2026-07-28 basic/patterns/mrtr): what a server may ask the client for inside a
//! result, the capability each request needs, and readers for the client's answers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// One entry of `inputRequests`: `{method, params}` without `jsonrpc`/`id` (MCP 2026-07-28 basic/patterns/mrtr § Input requests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
pub enum InputRequest {
    /// `elicitation/create` in form or URL mode.
    #[serde(rename = "elicitation/create")]
    Elicit(Elicitation),
    /// `sampling/createMessage` (deprecated feature): `CreateMessageRequestParams`.
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(Value),
    /// `roots/list` (deprecated feature).
    #[serde(rename = "roots/list")]
    ListRoots,
}

/// `ElicitRequestParams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Elicitation {
    /// Ask the user to fill a flat form. Never for secrets (MCP 2026-07-28 basic/patterns/mrtr § Input requests).
    Form {
        /// What to ask.
        message: String,
        /// Flat object schema of primitive properties.
        #[serde(rename = "requestedSchema")]
        requested_schema: Value,
    },
    /// Send the user to a URL (for secrets, payments, OAuth).
    Url {
        /// Why.
        message: String,
        /// Where; HTTPS, no credentials.
        url: String,
    },
}

impl InputRequest {
    /// A form-mode elicitation.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        Self::Elicit(Elicitation::Form { message: message.into(), requested_schema })
    }

    /// A URL-mode elicitation.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self::Elicit(Elicitation::Url { message: message.into(), url: url.into() })
    }

    /// A sampling request with one user text message.
    pub fn sample(prompt: &str, max_tokens: u32) -> Self {
        Self::CreateMessage(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        }))
    }

    /// The client capability this request needs, as a `ClientCapabilities` object (MCP 2026-07-28 basic § Client capabilities).
    pub fn required_capability(&self) -> Value {
        match self {
            Self::Elicit(Elicitation::Form { .. }) => json!({"elicitation": {"form": {}}}),
            Self::Elicit(Elicitation::Url { .. }) => json!({"elicitation": {"url": {}}}),
            Self::CreateMessage(params) if params.get("tools").is_some() => {
                json!({"sampling": {"tools": {}}})
            }
            Self::CreateMessage(_) => json!({"sampling": {}}),
            Self::ListRoots => json!({"roots": {}}),
        }
    }

    /// True when `capabilities` (the request's `clientCapabilities`) covers this request.
    pub fn is_supported_by(&self, capabilities: &Value) -> bool {
        crate::capabilities::covers(capabilities, &self.required_capability())
    }
}

/// The `action` of an `ElicitResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAction {
    /// The user submitted the form (or agreed to open the URL).
    Accept,
    /// The user said no.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// Reads `inputResponses[key]` as an `ElicitResult`; `None` when absent or not one.
pub fn elicit_response<'a>(
    responses: Option<&'a Map<String, Value>>,
    key: &str,
) -> Option<(ElicitAction, Option<&'a Map<String, Value>>)> {
    let r = responses?.get(key)?.as_object()?;
    let action = match r.get("action")?.as_str()? {
        "accept" => ElicitAction::Accept,
        "decline" => ElicitAction::Decline,
        "cancel" => ElicitAction::Cancel,
        _ => return None,
    };
    Some((action, r.get("content").and_then(Value::as_object)))
}

/// The `content` of an accepted elicitation answer under `key`.
pub fn accepted_content<'a>(responses: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Map<String, Value>> {
    match elicit_response(responses, key)? {
        (ElicitAction::Accept, content) => content,
        _ => None,
    }
}

/// The first text of a `CreateMessageResult` under `key`.
pub fn sampling_text<'a>(responses: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
    let r = responses?.get(key)?.as_object()?;
    r.get("model")?;
    let content = r.get("content")?;
    let block = content.as_array().and_then(|a| a.first()).unwrap_or(content);
    block.get("text").and_then(Value::as_str).or(Some(""))
}

/// The root URIs of a `ListRootsResult` under `key`.
pub fn roots(responses: Option<&Map<String, Value>>, key: &str) -> Option<Vec<String>> {
    let list = responses?.get(key)?.get("roots")?.as_array()?;
    Some(list.iter().filter_map(|r| r.get("uri")?.as_str().map(str::to_owned)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes() {
        let r = InputRequest::form("Name?", json!({"type":"object"}));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}})
        );
        assert_eq!(serde_json::to_value(InputRequest::ListRoots).unwrap(), json!({"method":"roots/list"}));
    }

    #[test]
    fn capability_coverage() {
        let form = InputRequest::form("x", json!({}));
        let url = InputRequest::url("x", "https://example.com");
        assert!(form.is_supported_by(&json!({"elicitation":{}})));
        assert!(form.is_supported_by(&json!({"elicitation":{"form":{}}})));
        assert!(!form.is_supported_by(&json!({"elicitation":{"url":{}}})));
        assert!(!form.is_supported_by(&json!({})));
        assert!(url.is_supported_by(&json!({"elicitation":{"url":{}}})));
        assert!(!url.is_supported_by(&json!({"elicitation":{}})));
        assert!(InputRequest::sample("x", 1).is_supported_by(&json!({"sampling":{}})));
        assert!(!InputRequest::ListRoots.is_supported_by(&json!({"sampling":{}})));
    }

    #[test]
    fn reading_answers() {
        let r = json!({"n":{"action":"accept","content":{"name":"Ada"}},"d":{"action":"decline"}});
        let m = r.as_object();
        assert_eq!(accepted_content(m, "n").unwrap()["name"], "Ada");
        assert!(accepted_content(m, "d").is_none());
        assert!(accepted_content(m, "missing").is_none());
    }
}
