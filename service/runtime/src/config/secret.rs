//! Secrets: read from the environment, a file or the config, and never printed.

use base64::Engine as _;

use super::ConfigError;

/// Secret bytes. `Debug` prints `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Secret {
    /// Wraps bytes.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The bytes; call only where they are used.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The secret as text (secrets read with `resolve_text` are UTF-8).
    pub fn expose_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Where a secret comes from: exactly one of the three.
pub struct SecretSource<'a> {
    /// Dotted config key, for messages.
    pub key: &'a str,
    /// `secret_env`.
    pub env: Option<&'a str>,
    /// `secret_file`.
    pub file: Option<&'a str>,
    /// `secret`.
    pub inline: Option<&'a str>,
}

impl SecretSource<'_> {
    /// Resolves and base64-decodes the secret (keys). `lookup_env` reads the environment the
    /// config was loaded with.
    pub fn resolve(&self, lookup_env: &dyn Fn(&str) -> Option<String>) -> Result<Secret, ConfigError> {
        let text = self.resolve_text(lookup_env)?;
        base64::engine::general_purpose::STANDARD.decode(text.expose()).map(Secret).map_err(|_| {
            ConfigError::invalid(
                self.key,
                "the secret is not valid base64 (generate one with: openssl rand -base64 32)",
            )
        })
    }

    /// Resolves the secret as text without surrounding whitespace (tokens).
    pub fn resolve_text(&self, lookup_env: &dyn Fn(&str) -> Option<String>) -> Result<Secret, ConfigError> {
        let key = self.key;
        let text = match (self.env, self.file, self.inline) {
            (Some(var), None, None) => lookup_env(var).ok_or_else(|| {
                ConfigError::invalid(format!("{key}.secret_env"), format!("environment variable {var} is not set"))
            })?,
            (None, Some(path), None) => std::fs::read_to_string(path)
                .map_err(|e| ConfigError::invalid(format!("{key}.secret_file"), format!("cannot read {path}: {e}")))?,
            (None, None, Some(value)) => value.to_owned(),
            _ => {
                return Err(ConfigError::invalid(key, "set exactly one of secret_env, secret_file or secret"));
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(ConfigError::invalid(key, "the secret is empty"));
        }
        Ok(Secret(text.as_bytes().to_vec()))
    }
}
