//! Secrets for upstream credentials: read from an environment variable or a file at load,
//! never printed. (The runtime has its own key type; adapters cannot depend on the runtime.)

use crate::config::ConfigProblem;

/// A secret string. `Debug` prints `[redacted]`; there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Secret {
    /// The secret; call only where it is put on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Resolves exactly one of `secret_env` / `secret_file` under `key` (e.g. `auth`).
/// `lookup_env` reads the environment the runtime was started with.
pub fn resolve(
    key: &str,
    env: Option<&str>,
    file: Option<&str>,
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret, ConfigProblem> {
    let text = match (env, file) {
        (Some(var), None) => lookup_env(var).ok_or_else(|| {
            ConfigProblem::new(format!("{key}.secret_env"), format!("environment variable {var} is not set"))
        })?,
        // Files written by `echo` or mounted Secrets often end with a newline: cut it.
        (None, Some(path)) => std::fs::read_to_string(path)
            .map(|s| s.trim_end().to_owned())
            .map_err(|e| ConfigProblem::new(format!("{key}.secret_file"), format!("cannot read {path}: {e}")))?,
        _ => return Err(ConfigProblem::new(key, "set exactly one of secret_env or secret_file")),
    };
    if text.is_empty() {
        return Err(ConfigProblem::new(key, "the secret is empty"));
    }
    Ok(Secret(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_env_or_file_and_never_prints() {
        let env = |v: &str| (v == "TOKEN").then(|| "s3cr3t".to_owned());
        let s = resolve("auth", Some("TOKEN"), None, &env).unwrap();
        assert_eq!(s.expose(), "s3cr3t");
        assert!(!format!("{s:?}").contains("s3cr3t"));

        let dir = std::env::temp_dir().join(format!("rest-secret-{}", std::process::id()));
        std::fs::write(&dir, "from-file\n").unwrap();
        let s = resolve("auth", None, Some(dir.to_str().unwrap()), &env).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(s.expose(), "from-file");
    }

    #[test]
    fn errors_name_the_key() {
        let env = |_: &str| None;
        assert_eq!(resolve("auth", Some("NOPE"), None, &env).unwrap_err().key, "auth.secret_env");
        assert_eq!(resolve("auth", None, Some("/nonexistent/x"), &env).unwrap_err().key, "auth.secret_file");
        assert_eq!(resolve("auth", None, None, &env).unwrap_err().key, "auth");
        assert_eq!(resolve("auth", Some("A"), Some("/b"), &env).unwrap_err().key, "auth");
    }
}
