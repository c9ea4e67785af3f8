//! Credentials on the wire: the one header an `[adapters.auth]` table adds to every request,
//! marked sensitive so reqwest/hyper never print it and HPACK never indexes it.

use base64::Engine as _;
use mcp_adapter_api::{Environment, SecretSource};
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};

use crate::config::{AuthConfig, ConfigProblem};

/// Builds the credential header for `auth`; `env` resolves `secret_env`. Secrets are never
/// inline: a config file is not a secret store.
pub fn header(auth: &AuthConfig, env: &Environment) -> Result<(HeaderName, HeaderValue), ConfigProblem> {
    let resolve = |var: &Option<String>, file: &Option<String>| {
        SecretSource::new("auth", var.as_deref(), file.as_deref()).resolve(env)
    };
    let (name, value) = match auth {
        AuthConfig::Bearer(s) => {
            let token = resolve(&s.secret_env, &s.secret_file)?;
            (AUTHORIZATION, format!("Bearer {}", token.expose_str()))
        }
        AuthConfig::ApiKey(a) => {
            let name = HeaderName::from_bytes(a.header.as_bytes())
                .map_err(|_| ConfigProblem::new("auth.header", format!("'{}' is not a header name", a.header)))?;
            let key = resolve(&a.secret_env, &a.secret_file)?;
            (name, key.expose_str().to_owned())
        }
        AuthConfig::Basic(b) => {
            if b.username.contains(':') {
                return Err(ConfigProblem::new("auth.username", "must not contain ':' (RFC 7617)"));
            }
            let password = resolve(&b.secret_env, &b.secret_file)?;
            let pair = format!("{}:{}", b.username, password.expose_str());
            (AUTHORIZATION, format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
        }
    };
    // The message must not quote the value: it is the secret.
    let mut value = HeaderValue::from_str(&value)
        .map_err(|_| ConfigProblem::new("auth", "the secret contains characters a header cannot carry"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ApiKeyAuth, BasicAuth, SecretRef};

    fn env() -> Environment {
        [("TOKEN", "t0k"), ("BAD", "a\nb")].into_iter().collect()
    }

    #[test]
    fn builds_each_kind_as_a_sensitive_header() {
        let r = || SecretRef { secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (n, v) = header(&AuthConfig::Bearer(r()), &env()).unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("authorization", "Bearer t0k"));
        assert!(v.is_sensitive());
        assert_eq!(format!("{v:?}"), "Sensitive");

        let a = ApiKeyAuth { header: "X-Api-Key".to_owned(), secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (n, v) = header(&AuthConfig::ApiKey(a), &env()).unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-api-key", "t0k"));

        let b = BasicAuth { username: "me".to_owned(), secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (_, v) = header(&AuthConfig::Basic(b), &env()).unwrap();
        assert_eq!(v.to_str().unwrap(), "Basic bWU6dDBr");
    }

    #[test]
    fn a_bad_secret_is_refused_without_quoting_it() {
        let r = SecretRef { secret_env: Some("BAD".to_owned()), secret_file: None };
        let e = header(&AuthConfig::Bearer(r), &env()).unwrap_err();
        assert_eq!(e.key, "auth");
        assert!(!e.problem.contains("a\nb"));
    }
}
