//! The child's environment: empty, plus an allow-list of the runtime's variables and fixed
//! values. Loader variables, which make a program load or run other code, are refused.

use schemars::JsonSchema;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// Exact names that make a program (or its interpreter, shell, loader or a helper it starts)
/// load or run code chosen by whoever sets them, with what they load (for the refusal).
/// Sources, each tool's own documentation: glibc's `unsecvars.h` (what it strips for setuid
/// programs), bash(1) and sh (POSIX `ENV`), git(1) and git-config(1) "ENVIRONMENT", python(1)
/// "ENVIRONMENT VARIABLES", perlrun(1), ruby(1), node(1), the JDK's "Environment Variables"
/// (`JDK_JAVA_OPTIONS`, `JAVA_TOOL_OPTIONS`), .NET's runtime configuration ("startup hooks",
/// "additional deps", CoreCLR profiler), php.ini's search order (`PHPRC`, `PHP_INI_SCAN_DIR`),
/// lua(1), OpenSSL config(5), less(1), vim(1), npm-config(7).
const LOADER_NAMES: &[(&str, &str)] = &[
    // glibc (unsecvars.h) and its tunables (CVE-2023-4911)
    ("GCONV_PATH", "glibc's iconv modules (shared libraries)"),
    ("GETCONF_DIR", "glibc's getconf helper programs"),
    ("GLIBC_TUNABLES", "glibc tunables (CVE-2023-4911)"),
    ("HOSTALIASES", "a file glibc's resolver reads"),
    ("LOCALDOMAIN", "glibc resolver settings"),
    ("LOCPATH", "glibc locale files"),
    ("MALLOC_TRACE", "a file glibc's malloc writes"),
    ("NIS_PATH", "glibc NIS lookups"),
    ("NLSPATH", "glibc message catalogs"),
    ("RESOLV_HOST_CONF", "a file glibc's resolver reads"),
    ("RES_OPTIONS", "glibc resolver settings"),
    // shells
    ("BASH_ENV", "a script bash runs at start"),
    ("ENV", "a script sh runs at start"),
    ("SHELLOPTS", "bash options (xtrace, ...)"),
    ("BASHOPTS", "bash options"),
    ("BASH_LOADABLES_PATH", "bash builtins (shared libraries)"),
    ("PS4", "a prompt bash expands, command substitutions included, under xtrace"),
    ("PROMPT_COMMAND", "a command bash runs before each prompt"),
    ("IFS", "how a shell splits words, changing what scripts run"),
    ("ZDOTDIR", "zsh's start-up files"),
    // git
    ("GIT_CONFIG_GLOBAL", "a git config file (core.pager, core.sshCommand, aliases, ... run commands)"),
    ("GIT_CONFIG_SYSTEM", "a git config file (core.pager, core.sshCommand, aliases, ... run commands)"),
    ("GIT_CONFIG", "a git config file (core.pager, core.sshCommand, aliases, ... run commands)"),
    ("GIT_CONFIG_PARAMETERS", "git config values (core.pager, core.sshCommand, ... run commands)"),
    ("GIT_CONFIG_COUNT", "git config values (core.pager, core.sshCommand, ... run commands)"),
    ("GIT_DIR", "a git repository whose config and hooks git runs"),
    ("GIT_COMMON_DIR", "a git repository whose config and hooks git runs"),
    ("GIT_TEMPLATE_DIR", "git hooks copied into new repositories"),
    ("GIT_EXEC_PATH", "git's sub-command programs"),
    ("GIT_SSH", "the program git runs for ssh"),
    ("GIT_SSH_COMMAND", "the command git runs for ssh"),
    ("GIT_ASKPASS", "the program git runs to ask for credentials"),
    ("GIT_PROXY_COMMAND", "the command git runs to connect"),
    ("GIT_ALLOW_PROTOCOL", "git transports, ext:: included (runs commands)"),
    ("GIT_PAGER", "the pager git runs"),
    ("GIT_EDITOR", "the editor git runs"),
    ("GIT_SEQUENCE_EDITOR", "the editor git rebase runs"),
    ("GIT_EXTERNAL_DIFF", "the diff program git runs"),
    // Python
    ("PYTHONPATH", "Python modules"),
    ("PYTHONHOME", "Python's standard library"),
    ("PYTHONSTARTUP", "a Python script run at start"),
    ("PYTHONUSERBASE", "Python site-packages (and their .pth files)"),
    ("PYTHONPLATLIBDIR", "Python's standard library"),
    ("PYTHONPYCACHEPREFIX", "Python bytecode"),
    ("PYTHONBREAKPOINT", "a Python callable for breakpoint()"),
    ("PYTHONINSPECT", "an interactive Python prompt after the script"),
    ("PYTHONWARNINGS", "Python warning categories (imports modules)"),
    ("PYTHONEXECUTABLE", "the Python executable reported to the program"),
    // Perl
    ("PERL5LIB", "Perl modules"),
    ("PERLLIB", "Perl modules"),
    ("PERL5OPT", "Perl options (-M loads modules)"),
    ("PERL5DB", "Perl debugger code"),
    ("PERLIO", "PerlIO layers (modules)"),
    // Ruby
    ("RUBYOPT", "Ruby options (-r loads code)"),
    ("RUBYLIB", "Ruby libraries"),
    ("GEM_HOME", "Ruby gems"),
    ("GEM_PATH", "Ruby gems"),
    // Node.js, npm
    ("NODE_OPTIONS", "Node.js options (--require, --import load code)"),
    ("NODE_PATH", "Node.js modules"),
    ("NODE_REPL_EXTERNAL_MODULE", "a Node.js module run instead of the REPL"),
    // JVM
    ("JAVA_TOOL_OPTIONS", "JVM options (-javaagent loads code)"),
    ("_JAVA_OPTIONS", "JVM options (-javaagent loads code)"),
    ("JDK_JAVA_OPTIONS", "JVM options (-javaagent loads code)"),
    ("JAVA_OPTS", "JVM options launch scripts pass on (-javaagent loads code)"),
    ("CLASSPATH", "Java classes"),
    // .NET
    ("DOTNET_STARTUP_HOOKS", ".NET startup hook assemblies"),
    ("DOTNET_ADDITIONAL_DEPS", ".NET assemblies"),
    ("DOTNET_SHARED_STORE", ".NET assemblies"),
    // PHP
    ("PHPRC", "php.ini (auto_prepend_file, extensions)"),
    ("PHP_INI_SCAN_DIR", "php.ini files (auto_prepend_file, extensions)"),
    // Lua
    ("LUA_INIT", "Lua code run at start"),
    ("LUA_PATH", "Lua modules"),
    ("LUA_CPATH", "Lua C modules (shared libraries)"),
    // libraries and helper programs
    ("OPENSSL_CONF", "an OpenSSL config (engines, providers: shared libraries)"),
    ("OPENSSL_ENGINES", "OpenSSL engines (shared libraries)"),
    ("OPENSSL_MODULES", "OpenSSL providers (shared libraries)"),
    ("LESSOPEN", "an input preprocessor less runs"),
    ("LESSCLOSE", "a post-processor less runs"),
    ("EDITOR", "the editor programs run"),
    ("VISUAL", "the editor programs run"),
    ("PAGER", "the pager programs run"),
    ("MANPAGER", "the pager man runs"),
    ("BROWSER", "the browser programs run"),
    ("SSH_ASKPASS", "the program ssh runs to ask for credentials"),
    ("SUDO_ASKPASS", "the program sudo runs to ask for credentials"),
    ("VIMINIT", "Ex commands vim runs at start"),
    ("EXINIT", "Ex commands vi/ex run at start"),
    ("GTK_MODULES", "GTK modules (shared libraries)"),
    ("QT_PLUGIN_PATH", "Qt plugins (shared libraries)"),
    ("GST_PLUGIN_PATH", "GStreamer plugins (shared libraries)"),
];

/// Prefixes of loader variables, with what they load.
const LOADER_PREFIXES: &[(&str, &str)] = &[
    ("LD_", "the dynamic loader's libraries and audit modules (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, ...)"),
    ("DYLD_", "the macOS dynamic loader's libraries"),
    ("BASH_FUNC_", "a bash function exported into every bash"),
    ("GIT_CONFIG_KEY_", "git config values (core.pager, core.sshCommand, ... run commands)"),
    ("GIT_CONFIG_VALUE_", "git config values (core.pager, core.sshCommand, ... run commands)"),
    ("CORECLR_", "the .NET runtime's profiler (a shared library)"),
    ("COR_PROFILER", "the .NET profiler (a shared library)"),
    ("COMPLUS_", ".NET runtime settings (profiler, startup hooks)"),
    ("NPM_CONFIG_", "npm settings (script-shell, node-options run code)"),
    ("LUA_INIT_", "Lua code run at start"),
    ("LUA_PATH_", "Lua modules"),
    ("LUA_CPATH_", "Lua C modules (shared libraries)"),
];

/// What a loader variable loads, or `None` for an ordinary variable. Compared without case,
/// so `ld_preload` is refused too (harmless on Linux, meaningful elsewhere).
pub fn loads(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    LOADER_NAMES
        .iter()
        .find(|(n, _)| *n == upper)
        .or_else(|| LOADER_PREFIXES.iter().find(|(p, _)| upper.starts_with(p)))
        .map(|(_, what)| *what)
}

/// True for a variable that can make a program load or run other code.
pub fn is_loader_variable(name: &str) -> bool {
    loads(name).is_some()
}

/// A tool's opt-in to loader variables: `allow_loader_env = ["GIT_CONFIG_GLOBAL"]` names the
/// ones it needs (compared without case); `true` allows every one (kept for older configs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LoaderOptIn {
    /// `true`: all; `false`: none.
    All(bool),
    /// Exactly these names.
    Names(Vec<String>),
}

impl Default for LoaderOptIn {
    fn default() -> Self {
        Self::All(false)
    }
}

impl LoaderOptIn {
    fn allows(&self, name: &str) -> bool {
        match self {
            Self::All(all) => *all,
            Self::Names(names) => names.iter().any(|n| n.eq_ignore_ascii_case(name)),
        }
    }
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
    allow_loader: &LoaderOptIn,
    lookup: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<(OsString, OsString)>, EnvError> {
    let check = |name: &str, key: String| -> Result<(), EnvError> {
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(EnvError { key, problem: format!("'{name}' is not a variable name") });
        }
        if let Some(what) = loads(name)
            && !allow_loader.allows(name)
        {
            return Err(EnvError {
                key,
                problem: format!(
                    "'{name}' makes programs load or run {what}, so whoever sets it runs code; it is refused \
                     unless this tool opts in with allow_loader_env = [\"{name}\"]"
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
        let env = resolve(&["HOME".into(), "ABSENT".into()], &fixed, &LoaderOptIn::default(), &runtime_env).unwrap();
        assert_eq!(env, [("HOME".into(), "/home/svc".into()), ("TZ".into(), "UTC".into())]);
    }

    const NONE: LoaderOptIn = LoaderOptIn::All(false);

    #[test]
    fn refuses_loader_variables_unless_overridden() {
        for name in ["LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_FUNC_x%%"] {
            let e = resolve(&[name.into()], &BTreeMap::new(), &NONE, &runtime_env).unwrap_err();
            assert_eq!(e.key, "env_allow");
            assert!(e.problem.contains(name) && e.problem.contains("allow_loader_env"), "{}", e.problem);
        }
        let fixed = BTreeMap::from([("PYTHONPATH".to_owned(), "/x".to_owned())]);
        assert_eq!(resolve(&[], &fixed, &NONE, &runtime_env).unwrap_err().key, "env.PYTHONPATH");
        let env = resolve(&["NODE_OPTIONS".into()], &fixed, &LoaderOptIn::All(true), &runtime_env).unwrap();
        assert_eq!(env.len(), 2);
        assert!(!is_loader_variable("PATH") && !is_loader_variable("LANG") && !is_loader_variable("ENVIRONMENT"));
    }

    /// Each runtime's documented start-up hooks: every one is refused by default, and the
    /// refusal names the variable, what it loads and the opt-in.
    #[test]
    fn refuses_every_documented_start_up_hook() {
        let hooks = [
            "GIT_CONFIG_GLOBAL",
            "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_VALUE_0",
            "GIT_EXEC_PATH",
            "GIT_SSH",
            "GIT_SSH_COMMAND",
            "GIT_ASKPASS",
            "GIT_PROXY_COMMAND",
            "GIT_DIR",
            "GIT_EDITOR",
            "GIT_PAGER",
            "GIT_SEQUENCE_EDITOR",
            "GIT_ALLOW_PROTOCOL",
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONUSERBASE",
            "PERL5OPT",
            "PERL5LIB",
            "PERLLIB",
            "PERL5DB",
            "RUBYOPT",
            "RUBYLIB",
            "NODE_OPTIONS",
            "NODE_PATH",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "CLASSPATH",
            "DOTNET_STARTUP_HOOKS",
            "DOTNET_ADDITIONAL_DEPS",
            "CORECLR_PROFILER_PATH",
            "CORECLR_ENABLE_PROFILING",
            "PHPRC",
            "PHP_INI_SCAN_DIR",
            "BASH_ENV",
            "ENV",
            "PS4",
            "PROMPT_COMMAND",
            "SHELLOPTS",
            "BASHOPTS",
            "IFS",
            "LD_PRELOAD",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "EDITOR",
            "VISUAL",
            "PAGER",
            "LESSOPEN",
            "LESSCLOSE",
            "npm_config_script_shell",
        ];
        for name in hooks {
            let e = resolve(&[name.into()], &BTreeMap::new(), &NONE, &runtime_env).unwrap_err();
            let what = loads(name).unwrap();
            assert!(
                e.problem.contains(&format!("'{name}'"))
                    && e.problem.contains(what)
                    && e.problem.contains(&format!("allow_loader_env = [\"{name}\"]")),
                "{}",
                e.problem
            );
        }
    }

    #[test]
    fn the_opt_in_names_exactly_the_variables_it_allows() {
        let only = LoaderOptIn::Names(vec!["git_config_global".into()]);
        let lookup = |_: &str| Some(OsString::from("/etc/tool.gitconfig"));
        let env = resolve(&["GIT_CONFIG_GLOBAL".into()], &BTreeMap::new(), &only, &lookup).unwrap();
        assert_eq!(env, [("GIT_CONFIG_GLOBAL".into(), "/etc/tool.gitconfig".into())]);
        let e = resolve(&["GIT_CONFIG_GLOBAL".into(), "GIT_CONFIG_SYSTEM".into()], &BTreeMap::new(), &only, &lookup)
            .unwrap_err();
        assert!(e.problem.contains("GIT_CONFIG_SYSTEM"), "{}", e.problem);
        let parsed: LoaderOptIn = serde_json::from_value(serde_json::json!(["PHPRC"])).unwrap();
        assert_eq!(parsed, LoaderOptIn::Names(vec!["PHPRC".into()]));
        let parsed: LoaderOptIn = serde_json::from_value(serde_json::json!(true)).unwrap();
        assert_eq!(parsed, LoaderOptIn::All(true));
    }

    #[test]
    fn refuses_malformed_names() {
        assert!(resolve(&["A=B".into()], &BTreeMap::new(), &NONE, &runtime_env).is_err());
        assert!(resolve(&[String::new()], &BTreeMap::new(), &NONE, &runtime_env).is_err());
    }
}
