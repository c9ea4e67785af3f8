//! The child's environment: empty, plus an allow-list of the runtime's variables and fixed
//! values. Loader variables, which make a program load or run other code, are refused.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Exact names that make a program (or its interpreter, shell or loader) load or run code
/// chosen by whoever sets them. Sources: glibc's `unsecvars.h` (what it strips for setuid
/// programs), the documentation of bash, Node.js, Python, Perl, Ruby, the JVM, Lua, OpenSSL,
/// less and git.
const LOADER_NAMES: &[&str] = &[
    // glibc (unsecvars.h) and its tunables (CVE-2023-4911)
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_TRACE",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    // shells: startup files and exported functions
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    // interpreters and runtimes
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONBREAKPOINT",
    "PYTHONINSPECT",
    "PYTHONWARNINGS",
    "PERL5LIB",
    "PERLLIB",
    "PERL5OPT",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "LUA_INIT",
    "LUA_PATH",
    "LUA_CPATH",
    // libraries and tools that load modules or run helper commands
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    "LESSOPEN",
    "LESSCLOSE",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_TEMPLATE_DIR",
];

/// Prefixes of loader variables: the dynamic loaders (`LD_PRELOAD`, `LD_LIBRARY_PATH`,
/// `LD_AUDIT`, ...; `DYLD_INSERT_LIBRARIES`, ...), bash's exported functions
/// (`BASH_FUNC_name%%`), git's environment config and Lua's versioned variables.
const LOADER_PREFIXES: &[&str] =
    &["LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "LUA_INIT_", "LUA_PATH_", "LUA_CPATH_"];

/// True for a variable that can make a program load or run other code. Compared without
/// case, so `ld_preload` is refused too (harmless on Linux, meaningful elsewhere).
pub fn is_loader_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    LOADER_NAMES.contains(&upper.as_str()) || LOADER_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// A refused setting: which key (`env_allow` or `env`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvError {
    /// `env_allow` or `env.NAME`.
    pub key: String,
    /// What is wrong.
    pub problem: String,
}

/// The child's whole environment, resolved once at load: the allow-listed variables the
/// runtime has (absent ones are skipped), then the fixed values.
pub fn resolve(
    allow: &[String],
    fixed: &BTreeMap<String, String>,
    allow_loader: bool,
    lookup: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<(OsString, OsString)>, EnvError> {
    let check = |name: &str, key: String| -> Result<(), EnvError> {
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(EnvError { key, problem: format!("'{name}' is not a variable name") });
        }
        if !allow_loader && is_loader_variable(name) {
            return Err(EnvError {
                key,
                problem: format!(
                    "'{name}' makes programs load or run other code, so it is refused; \
                     set allow_loader_env = true on this tool if it really needs it"
                ),
            });
        }
        Ok(())
    };
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    for name in allow {
        check(name, "env_allow".to_owned())?;
        if let Some(value) = lookup(name) {
            env.insert(name.into(), value);
        }
    }
    for (name, value) in fixed {
        check(name, format!("env.{name}"))?;
        if value.contains('\0') {
            return Err(EnvError { key: format!("env.{name}"), problem: "contains a NUL byte".into() });
        }
        env.insert(name.into(), value.into());
    }
    Ok(env.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime_env(name: &str) -> Option<OsString> {
        match name {
            "HOME" => Some("/home/svc".into()),
            "LD_PRELOAD" => Some("/tmp/evil.so".into()),
            "NODE_OPTIONS" => Some("--require /tmp/evil.js".into()),
            _ => None,
        }
    }

    #[test]
    fn passes_only_what_is_listed() {
        let fixed = BTreeMap::from([("TZ".to_owned(), "UTC".to_owned())]);
        let env = resolve(&["HOME".into(), "ABSENT".into()], &fixed, false, &runtime_env).unwrap();
        assert_eq!(env, [("HOME".into(), "/home/svc".into()), ("TZ".into(), "UTC".into())]);
    }

    #[test]
    fn refuses_loader_variables_unless_overridden() {
        for name in ["LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_FUNC_x%%"] {
            let e = resolve(&[name.into()], &BTreeMap::new(), false, &runtime_env).unwrap_err();
            assert_eq!(e.key, "env_allow");
            assert!(e.problem.contains(name) && e.problem.contains("allow_loader_env"), "{}", e.problem);
        }
        let fixed = BTreeMap::from([("PYTHONPATH".to_owned(), "/x".to_owned())]);
        assert_eq!(resolve(&[], &fixed, false, &runtime_env).unwrap_err().key, "env.PYTHONPATH");
        let env = resolve(&["NODE_OPTIONS".into()], &fixed, true, &runtime_env).unwrap();
        assert_eq!(env.len(), 2);
        assert!(!is_loader_variable("PATH") && !is_loader_variable("LANG") && !is_loader_variable("ENVIRONMENT"));
    }

    #[test]
    fn refuses_malformed_names() {
        assert!(resolve(&["A=B".into()], &BTreeMap::new(), false, &runtime_env).is_err());
        assert!(resolve(&[String::new()], &BTreeMap::new(), false, &runtime_env).is_err());
    }
}
