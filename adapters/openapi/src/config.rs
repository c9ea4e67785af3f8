//! Configuration of the OpenAPI adapter as written (`[[adapters]] kind = "openapi"`): where
//! the document is, which operations become tools, the credentials per security scheme, and
//! the REST adapter's upstream settings under `http`.

use std::collections::BTreeMap;

pub use mcp_adapter_api::ConfigProblem;
use mcp_adapter_rest::RestConfig;
use mcp_adapter_rest::config::TokenExchangeConfig;
use schemars::JsonSchema;
use serde::Deserialize;

/// `[[adapters]] kind = "openapi"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenApiConfig {
    /// The OpenAPI 3.0/3.1 document, JSON or YAML: a file path or an `http(s)://` URL,
    /// read at start and on every reload.
    pub spec: String,
    /// Upstream settings of the REST adapter that runs the calls (`base_urls`, `headers`,
    /// `retry`, `pool`, ...). Without `base_urls`, the document's first `servers` entry.
    #[serde(default)]
    pub http: Option<RestConfig>,
    /// Credentials by security scheme name (the keys of `components.securitySchemes`).
    /// An operation whose requirements name a scheme without one is left out.
    #[serde(default)]
    pub credentials: BTreeMap<String, CredentialConfig>,
    /// Only operations matching this (every list that is set must match).
    #[serde(default)]
    pub include: Selection,
    /// No operation matching any list of this.
    #[serde(default)]
    pub exclude: Selection,
    /// Only GET and HEAD operations.
    #[serde(default)]
    pub read_only: bool,
    /// Longest tool and parameter description carried over, in characters.
    #[serde(default = "default_max_description_chars")]
    pub max_description_chars: usize,
    /// Largest input schema of one tool, in bytes of JSON: beyond it, the schemas the
    /// arguments reference farthest away are left unconstrained (huge documents such as
    /// Microsoft Graph reference thousands of schemas from every operation).
    #[serde(default = "default_max_schema_bytes")]
    pub max_schema_bytes: usize,
    /// Most bytes read for one load: the document and every file its `$ref`s name, together
    /// (any number of files). A load that would pass it is refused, naming this key.
    #[serde(default = "default_max_spec_bytes")]
    pub max_spec_bytes: usize,
}

fn default_max_description_chars() -> usize {
    1024
}
fn default_max_schema_bytes() -> usize {
    16 * 1024
}
fn default_max_spec_bytes() -> usize {
    crate::source::DEFAULT_MAX_BYTES
}

/// A set of operations, by tag, `operationId`, path glob (`*` within a segment, `**` across
/// segments) and method.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Selection {
    /// Tags (`pets`).
    pub tags: Vec<String>,
    /// `operationId`s (`listPets`).
    pub operations: Vec<String>,
    /// Path globs (`/pets/**`).
    pub paths: Vec<String>,
    /// Methods (`GET`, `post`).
    pub methods: Vec<String>,
}

/// One operation as the selection sees it.
#[derive(Debug, Clone, Copy)]
pub struct OperationRef<'a> {
    /// Lower-case method.
    pub method: &'a str,
    /// Path template.
    pub path: &'a str,
    /// `operationId`.
    pub operation_id: Option<&'a str>,
    /// Tags.
    pub tags: &'a [String],
}

impl Selection {
    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.operations.is_empty() && self.paths.is_empty() && self.methods.is_empty()
    }

    /// Per list: `None` when the list is empty, else whether the operation matches it.
    fn matches(&self, op: &OperationRef<'_>) -> [Option<bool>; 4] {
        let list = |l: &Vec<String>, hit: &dyn Fn(&String) -> bool| (!l.is_empty()).then(|| l.iter().any(hit));
        [
            list(&self.tags, &|t| op.tags.contains(t)),
            list(&self.operations, &|o| op.operation_id == Some(o.as_str())),
            list(&self.paths, &|g| glob(g, op.path)),
            list(&self.methods, &|m| m.eq_ignore_ascii_case(op.method)),
        ]
    }

    /// Why `op` is not selected by `include` and `exclude`, if it is not.
    pub fn refuses(include: &Self, exclude: &Self, op: &OperationRef<'_>) -> Option<&'static str> {
        if !include.is_empty() && include.matches(op).contains(&Some(false)) {
            return Some("not matched by include");
        }
        if exclude.matches(op).contains(&Some(true)) {
            return Some("matched by exclude");
        }
        None
    }
}

/// `*` matches within one path segment, `**` any run of characters, `/` included.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.strip_prefix("**") {
        Some(rest) => (0..=text.len()).filter(|i| text.is_char_boundary(*i)).any(|i| glob(rest, &text[i..])),
        None => match pattern.strip_prefix('*') {
            Some(rest) => {
                let segment = text.find('/').unwrap_or(text.len());
                (0..=segment).filter(|i| text.is_char_boundary(*i)).any(|i| glob(rest, &text[i..]))
            }
            None => match (pattern.chars().next(), text.chars().next()) {
                (None, None) => true,
                (Some(p), Some(t)) if p == t => glob(&pattern[p.len_utf8()..], &text[t.len_utf8()..]),
                _ => false,
            },
        },
    }
}

/// `[adapters.credentials.<scheme>]`: the secret for one security scheme; its type (API key
/// in a header, query or cookie; HTTP bearer or basic; OAuth2 / OpenID Connect as a static
/// bearer token) comes from the document. An `oauth2`, `openIdConnect` or HTTP bearer scheme
/// may instead get a token per caller by `token_exchange` (RFC 8693).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialConfig {
    /// Per-caller tokens exchanged for the caller's own access token (instead of a secret).
    pub token_exchange: Option<TokenExchangeConfig>,
    /// Environment variable holding the secret.
    pub secret_env: Option<String>,
    /// File holding the secret.
    pub secret_file: Option<String>,
    /// User name of an HTTP basic scheme (not secret).
    pub username: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_segments_and_subtrees() {
        assert!(glob("/pets/*", "/pets/{id}"));
        assert!(!glob("/pets/*", "/pets/{id}/toys"));
        assert!(glob("/pets/**", "/pets/{id}/toys"));
        assert!(glob("**/toys", "/pets/{id}/toys"));
        assert!(!glob("/pets", "/pets/x"));
    }

    #[test]
    fn include_needs_every_set_list_exclude_any() {
        let tags = ["pets".to_owned()];
        let op = OperationRef { method: "get", path: "/pets", operation_id: Some("listPets"), tags: &tags };
        let sel = |v: serde_json::Value| serde_json::from_value::<Selection>(v).unwrap();
        let none = Selection::default();
        assert_eq!(Selection::refuses(&none, &none, &op), None);
        assert_eq!(
            Selection::refuses(&sel(serde_json::json!({"tags": ["pets"], "methods": ["GET"]})), &none, &op),
            None
        );
        assert!(
            Selection::refuses(&sel(serde_json::json!({"tags": ["pets"], "methods": ["post"]})), &none, &op).is_some()
        );
        assert!(Selection::refuses(&none, &sel(serde_json::json!({"operations": ["listPets"]})), &op).is_some());
        assert!(serde_json::from_value::<Selection>(serde_json::json!({"tag": ["x"]})).is_err());
    }
}
