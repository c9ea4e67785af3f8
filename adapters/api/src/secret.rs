//! Secrets (tokens, passwords, keys): resolved once at load from an environment variable, a
//! file or, where a section allows it, the config itself; never printed.

use crate::build::Environment;
use crate::problems::ConfigProblem;

/// Secret bytes. `Debug` and `Display` print `[redacted]`; only [`Secret::expose`] and
/// [`Secret::expose_str`] give the value, to be called where it is used.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl Secret {
    /// Wraps bytes (a decoded key, a header value).
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The bytes.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The secret as text: what [`SecretSource::resolve`] returns always is; empty for bytes
    /// that are not UTF-8 (decoded binary keys).
    /// Whether this stands for a secret an offline check did not read ([`SecretSource::resolve`]):
    /// checks of a secret's content skip it. A resolved secret is never empty.
    pub fn is_unresolved(&self) -> bool {
        self.0.is_empty()
    }

    pub fn expose_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Where one secret comes from: exactly one of `<stem>_env`, `<stem>_file` and, when the
/// section offers it, `<stem>` inline. The stem is `secret` unless set with [`Self::stem`]
/// (`[redis]` uses `url`, `url_env`, `url_file`).
#[derive(Debug, Clone, Copy)]
pub struct SecretSource<'a> {
    key: &'a str,
    stem: &'a str,
    env: Option<&'a str>,
    file: Option<&'a str>,
    /// `None`: no inline form (a config file is not a secret store for credentials).
    inline: Option<Option<&'a str>>,
}

impl<'a> SecretSource<'a> {
    /// The `<stem>_env` / `<stem>_file` pair of the section at `key` (e.g. `auth`,
    /// `auth.tokens[0]`); errors name `key` or the offending key below it.
    pub fn new(key: &'a str, env: Option<&'a str>, file: Option<&'a str>) -> Self {
        Self { key, stem: "secret", env, file, inline: None }
    }

    /// Also accepts the value written inline as `<stem>` (tests and local use).
    pub fn or_inline(self, value: Option<&'a str>) -> Self {
        Self { inline: Some(value), ..self }
    }

    /// Names the keys `<stem>_env`, `<stem>_file`, `<stem>` instead of `secret_*`.
    pub fn stem(self, stem: &'a str) -> Self {
        Self { stem, ..self }
    }

    /// Reads the secret as text without surrounding whitespace (files written by `echo` and
    /// mounted Secrets end with a newline). `env` is the environment the config was loaded
    /// with. A missing, unreadable or empty source is an error naming its key; no message
    /// ever quotes the value.
    pub fn resolve(&self, env: &Environment) -> Result<Secret, ConfigProblem> {
        let stem = self.stem;
        let at = |suffix: &str| match suffix {
            "" => format!("{}.{stem}", self.key),
            s => format!("{}.{stem}_{s}", self.key),
        };
        let (key, text) = match (self.env, self.file, self.inline.flatten()) {
            // Offline, the choice of source is checked, nothing is read.
            (Some(_), None, None) | (None, Some(_), None) if env.is_offline() => return Ok(Secret(Vec::new())),
            (Some(var), None, None) => {
                let value = env
                    .get(var)
                    .ok_or_else(|| ConfigProblem::new(at("env"), format!("environment variable {var} is not set")))?;
                (at("env"), value.to_owned())
            }
            (None, Some(path), None) => {
                // Relative to the config file's folder; the message names the path tried.
                let path = env.path(path);
                let value = std::fs::read_to_string(&path)
                    .map_err(|e| ConfigProblem::new(at("file"), format!("cannot read {}: {e}", path.display())))?;
                (at("file"), value)
            }
            (None, None, Some(value)) => (at(""), value.to_owned()),
            _ => {
                let choices = match self.inline {
                    Some(_) => format!("{stem}_env, {stem}_file or {stem}"),
                    None => format!("{stem}_env or {stem}_file"),
                };
                return Err(ConfigProblem::new(self.key, format!("set exactly one of {choices}")));
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(ConfigProblem::new(key, "the secret is empty"));
        }
        Ok(Secret(text.as_bytes().to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        [("TOKEN", "s3cr3t\n"), ("BLANK", " ")].into_iter().collect()
    }

    #[test]
    fn reads_env_file_or_inline_and_never_prints() {
        let s = SecretSource::new("auth", Some("TOKEN"), None).resolve(&env()).unwrap();
        assert_eq!(s.expose_str(), "s3cr3t");
        assert!(!format!("{s:?} {s}").contains("s3cr3t"));

        let path = std::env::temp_dir().join(format!("api-secret-{}", std::process::id()));
        std::fs::write(&path, "from-file\n").unwrap();
        let s = SecretSource::new("auth", None, path.to_str()).resolve(&env()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(s.expose(), b"from-file");

        let s = SecretSource::new("k", None, None).or_inline(Some("inline")).resolve(&env()).unwrap();
        assert_eq!(s.expose_str(), "inline");
    }

    #[test]
    fn errors_name_the_key() {
        let problem = |s: SecretSource<'_>| s.resolve(&env()).unwrap_err();
        assert_eq!(problem(SecretSource::new("auth", Some("NOPE"), None)).key, "auth.secret_env");
        assert_eq!(problem(SecretSource::new("auth", Some("BLANK"), None)).key, "auth.secret_env");
        assert_eq!(problem(SecretSource::new("auth", None, Some("/nonexistent/x"))).key, "auth.secret_file");
        let none = problem(SecretSource::new("auth", None, None));
        assert_eq!(
            (none.key.as_str(), none.problem.as_str()),
            ("auth", "set exactly one of secret_env or secret_file")
        );
        assert_eq!(problem(SecretSource::new("auth", Some("A"), Some("/b"))).key, "auth");
        // Nothing set, where an inline value is offered too.
        assert_eq!(problem(SecretSource::new("auth", None, None).or_inline(None)).key, "auth");
        let redis = problem(SecretSource::new("redis", Some("NOPE"), None).stem("url"));
        assert_eq!(redis.key, "redis.url_env");
        let both = problem(SecretSource::new("redis", Some("A"), None).stem("url").or_inline(Some("x")));
        assert_eq!(both.problem, "set exactly one of url_env, url_file or url");
    }
}
