//! Security requirements (OpenAPI 3.1 § 4.8.30) mapped to configured credentials: the first
//! requirement whose every scheme has a credential wins; an empty requirement (`{}`) means
//! the operation may be called anonymously. Supported schemes: `apiKey` (header, query,
//! cookie), `http` bearer and basic, and `oauth2` / `openIdConnect` with a static access
//! token, or one exchanged per caller (RFC 8693, `credentials.<scheme>.token_exchange`).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_adapter_api::{ConfigProblem, Environment, Secret, SecretSource};
use mcp_adapter_rest::operation::Credential;
use mcp_adapter_rest::token_exchange::TokenExchange;
use serde_json::Value;

use crate::config::CredentialConfig;

/// Where an import gets the credential for a security scheme.
pub trait Credentials {
    /// `Ok(None)`: none configured; `Err`: the scheme cannot be served (why).
    fn for_scheme(&self, name: &str, scheme: &Value) -> Result<Option<Credential>, String>;
}

/// The credentials of `[adapters.credentials]`, secrets resolved at load.
#[derive(Debug, Default)]
pub struct Configured {
    by_scheme: BTreeMap<String, Source>,
}

/// What one scheme's credential is made from.
#[derive(Debug)]
enum Source {
    /// A secret (and the user name of a basic scheme).
    Secret(Secret, Option<String>),
    /// A token exchange, shared by every operation of the scheme (one cache).
    Exchange(Arc<TokenExchange>),
}

impl Configured {
    /// Resolves every secret now: a missing variable or file stops the load, naming the key.
    pub fn resolve(config: &BTreeMap<String, CredentialConfig>, env: &Environment) -> Result<Self, ConfigProblem> {
        let mut by_scheme = BTreeMap::new();
        for (name, c) in config {
            let key = format!("credentials.{name}");
            let source = match &c.token_exchange {
                Some(_) if c.secret_env.is_some() || c.secret_file.is_some() || c.username.is_some() => {
                    return Err(ConfigProblem::new(
                        key,
                        "set either token_exchange or a secret (secret_env, secret_file, username), not both",
                    ));
                }
                Some(x) => Source::Exchange(Arc::new(TokenExchange::new(x, &format!("{key}.token_exchange"), env)?)),
                None => Source::Secret(
                    SecretSource::new(&key, c.secret_env.as_deref(), c.secret_file.as_deref()).resolve(env)?,
                    c.username.clone(),
                ),
            };
            by_scheme.insert(name.clone(), source);
        }
        Ok(Self { by_scheme })
    }

    /// Scheme names configured.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_scheme.keys().map(String::as_str)
    }
}

impl Credentials for Configured {
    fn for_scheme(&self, name: &str, scheme: &Value) -> Result<Option<Credential>, String> {
        match self.by_scheme.get(name) {
            None => Ok(None),
            Some(Source::Secret(secret, username)) => credential(name, scheme, secret, username.as_deref()).map(Some),
            Some(Source::Exchange(x)) => {
                let text = |k: &str| scheme.get(k).and_then(Value::as_str).unwrap_or_default();
                let bearer = text("type") == "http" && text("scheme").eq_ignore_ascii_case("bearer");
                if matches!(text("type"), "oauth2" | "openIdConnect") || bearer {
                    Ok(Some(Credential::Exchanged(Arc::clone(x))))
                } else {
                    Err(format!(
                        "security scheme '{name}' takes no bearer token, so token_exchange cannot serve it (its type is \
                         '{}')",
                        text("type")
                    ))
                }
            }
        }
    }
}

/// The credential `secret` makes for `scheme`.
pub fn credential(name: &str, scheme: &Value, secret: &Secret, username: Option<&str>) -> Result<Credential, String> {
    let text = |k: &str| scheme.get(k).and_then(Value::as_str).unwrap_or_default();
    let bearer = || Credential::header("Authorization", &format!("Bearer {}", secret.expose_str()));
    match text("type") {
        "apiKey" => {
            let param = text("name");
            if param.is_empty() {
                return Err(format!("security scheme '{name}' has no parameter name"));
            }
            match text("in") {
                "header" => Credential::header(param, secret.expose_str()),
                "query" => Ok(Credential::Query(param.to_owned(), secret.clone())),
                "cookie" => Ok(Credential::Cookie(param.to_owned(), secret.clone())),
                other => Err(format!("security scheme '{name}': an API key in '{other}' is not supported")),
            }
        }
        "http" => match text("scheme").to_ascii_lowercase().as_str() {
            "bearer" => bearer(),
            "basic" => {
                let Some(user) = username else {
                    return Err(format!("security scheme '{name}' is HTTP basic: set credentials.{name}.username"));
                };
                if user.contains(':') {
                    return Err(format!("credentials.{name}.username must not contain ':' (RFC 7617)"));
                }
                let pair = format!("{user}:{}", secret.expose_str());
                Credential::header("Authorization", &format!("Basic {}", base64(pair.as_bytes())))
            }
            other => Err(format!("security scheme '{name}': HTTP '{other}' authentication is not supported")),
        },
        // A static access token (`Configured` serves token exchange).
        "oauth2" | "openIdConnect" => bearer(),
        other => Err(format!("security scheme '{name}' of type '{other}' is not supported")),
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The credentials `op` needs (its `security`, else the document's), or why it cannot be
/// served.
pub fn for_operation(root: &Value, op: &Value, credentials: &dyn Credentials) -> Result<Vec<Credential>, String> {
    let Some(Value::Array(requirements)) = op.get("security").or_else(|| root.get("security")) else {
        return Ok(Vec::new());
    };
    if requirements.is_empty() {
        return Ok(Vec::new());
    }
    let schemes = root.pointer("/components/securitySchemes");
    let mut missing: Vec<String> = Vec::new();
    for requirement in requirements {
        let Value::Object(names) = requirement else { continue };
        let mut found = Vec::with_capacity(names.len());
        for name in names.keys() {
            // A requirement may only name declared schemes (OpenAPI 3.1 § 4.8.30.1): an
            // undeclared one says nothing of where a credential goes, so no setting can meet it.
            let Some(scheme) = schemes.and_then(|s| s.get(name)) else {
                missing.push(undeclared(name));
                continue;
            };
            match credentials.for_scheme(name, scheme) {
                Ok(Some(c)) => found.push(c),
                Ok(None) => {
                    missing.push(format!("no credential for security scheme '{name}' (set credentials.{name})"));
                }
                Err(e) => missing.push(e),
            }
        }
        if found.len() == names.len() {
            return Ok(found);
        }
    }
    missing.dedup();
    Err(missing.join("; "))
}

/// Why a requirement naming the undeclared scheme `name` cannot be met: the same words as
/// the refusal of a `credentials.<name>` key (see `undeclared_credential`).
pub fn undeclared(name: &str) -> String {
    format!(
        "security scheme '{name}' is not declared in the document's components.securitySchemes, so no credential can \
         meet this requirement (the document needs fixing: declare '{name}' there, or list another requirement beside \
         it)"
    )
}

/// The refusal of `credentials.<name>` when the document declares no scheme `name`.
pub fn undeclared_credential(name: &str, declared: &[&str]) -> String {
    let declared = if declared.is_empty() { "none".to_owned() } else { declared.join(", ") };
    format!(
        "security scheme '{name}' is not declared in the document's components.securitySchemes (declared: \
         {declared}), so no credential can be configured for it: remove this key; an operation whose only requirement \
         names '{name}' is left out until the document declares it"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Only(&'static str);
    impl Credentials for Only {
        fn for_scheme(&self, name: &str, scheme: &Value) -> Result<Option<Credential>, String> {
            if name != self.0 {
                return Ok(None);
            }
            credential(name, scheme, &Secret::new(b"s3cr3t".to_vec()), Some("me")).map(Some)
        }
    }

    #[test]
    fn the_first_satisfiable_requirement_wins() {
        let root = json!({
            "security": [{"key": []}],
            "components": {"securitySchemes": {
                "key": {"type": "apiKey", "in": "query", "name": "api_key"},
                "basic": {"type": "http", "scheme": "basic"},
            }},
        });
        let c = for_operation(&root, &json!({}), &Only("key")).unwrap();
        assert!(matches!(&c[..], [Credential::Query(n, _)] if n == "api_key"));
        let e = for_operation(&root, &json!({}), &Only("basic")).unwrap_err();
        assert!(e.contains("credentials.key"), "{e}");
        let op = json!({"security": [{"key": []}, {"basic": []}]});
        let c = for_operation(&root, &op, &Only("basic")).unwrap();
        assert!(matches!(&c[..], [Credential::Header(n, v)] if n == "authorization" && v == "Basic bWU6czNjcjN0"));
        assert!(for_operation(&root, &json!({"security": [{"key": []}, {}]}), &Only("none")).unwrap().is_empty());
        assert!(for_operation(&root, &json!({"security": []}), &Only("none")).unwrap().is_empty());
    }

    #[test]
    fn a_requirement_naming_an_undeclared_scheme_says_the_document_is_at_fault() {
        let root = json!({"components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "k"}}}});
        let op = json!({"security": [{"sessionToken": []}]});
        let e = for_operation(&root, &op, &Only("sessionToken")).unwrap_err();
        assert!(e.contains("'sessionToken' is not declared in the document's components.securitySchemes"), "{e}");
        assert!(!e.contains("set credentials"), "{e}");
        // Another requirement beside it is still met.
        let op = json!({"security": [{"sessionToken": []}, {"key": []}]});
        assert_eq!(for_operation(&root, &op, &Only("key")).unwrap().len(), 1);
    }
}
