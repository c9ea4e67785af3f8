//! Credentials on the wire: the one header an `[adapters.auth]` table adds to every request,
//! marked sensitive so reqwest/hyper never print it and HPACK never indexes it.

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};

use crate::config::{AuthConfig, ConfigProblem};
use crate::secret;

/// Builds the credential header for `auth`.
pub fn header(
    auth: &AuthConfig,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<(HeaderName, HeaderValue), ConfigProblem> {
    let (name, value) = match auth {
        AuthConfig::Bearer(s) => {
            let token = secret::resolve("auth", s.secret_env.as_deref(), s.secret_file.as_deref(), lookup_env)?;
            (AUTHORIZATION, format!("Bearer {}", token.expose()))
        }
        AuthConfig::ApiKey(a) => {
            let name = HeaderName::from_bytes(a.header.as_bytes())
                .map_err(|_| ConfigProblem::new("auth.header", format!("'{}' is not a header name", a.header)))?;
            let key = secret::resolve("auth", a.secret_env.as_deref(), a.secret_file.as_deref(), lookup_env)?;
            (name, key.expose().to_owned())
        }
        AuthConfig::Basic(b) => {
            if b.username.contains(':') {
                return Err(ConfigProblem::new("auth.username", "must not contain ':' (RFC 7617)"));
            }
            let password = secret::resolve("auth", b.secret_env.as_deref(), b.secret_file.as_deref(), lookup_env)?;
            let pair = format!("{}:{}", b.username, password.expose());
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

    fn env(v: &str) -> Option<String> {
        match v {
            "TOKEN" => Some("t0k".to_owned()),
            "BAD" => Some("a\nb".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn builds_each_kind_as_a_sensitive_header() {
        let r = || SecretRef { secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (n, v) = header(&AuthConfig::Bearer(r()), &env).unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("authorization", "Bearer t0k"));
        assert!(v.is_sensitive());
        assert_eq!(format!("{v:?}"), "Sensitive");

        let a = ApiKeyAuth { header: "X-Api-Key".to_owned(), secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (n, v) = header(&AuthConfig::ApiKey(a), &env).unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-api-key", "t0k"));

        let b = BasicAuth { username: "me".to_owned(), secret_env: Some("TOKEN".to_owned()), secret_file: None };
        let (_, v) = header(&AuthConfig::Basic(b), &env).unwrap();
        assert_eq!(v.to_str().unwrap(), "Basic bWU6dDBr");
    }

    #[test]
    fn a_bad_secret_is_refused_without_quoting_it() {
        let r = SecretRef { secret_env: Some("BAD".to_owned()), secret_file: None };
        let e = header(&AuthConfig::Bearer(r), &env).unwrap_err();
        assert_eq!(e.key, "auth");
        assert!(!e.problem.contains("a\nb"));
    }
}
