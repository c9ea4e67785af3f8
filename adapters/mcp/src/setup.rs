//! Checking an `mcp` adapter's section (every problem at once, also offline) and resolving
//! the hosted server's program and environment, once per load.

use std::ffi::OsString;

use mcp_adapter_api::{BuildContext, ConfigProblem, Problems};

use crate::Mcp;
use crate::config::McpConfig;
use crate::http::Http;
use crate::stdio::Program;

impl Mcp {
    /// Every problem of `config` that [`Build::build`] would find, without starting anything:
    /// with an offline `cx.env` (`check --offline`) the program is not looked up and no
    /// secret is read.
    pub fn check(config: &McpConfig, cx: &BuildContext) -> Problems {
        let mut problems = Problems::new();
        if config.catalog_ttl_ms == 0 {
            problems.add("catalog_ttl_ms", "must be at least 1");
        }
        if config.request_timeout_ms == 0 {
            problems.add("request_timeout_ms", "must be at least 1");
        }
        if !config.prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)) {
            problems.add("prefix", "may hold only A-Z a-z 0-9 _ - . (it becomes part of tool names)");
        }
        match (&config.url, &config.command) {
            (Some(url), None) => {
                problems.ok(stdio_keys_unset(config));
                let per_caller = cx.user_auth.is_some() || config.token_exchange.is_some();
                problems.ok(Http::build(config, url, &cx.env, per_caller));
                if per_caller && config.auth.is_none() && config.prefix.is_empty() {
                    let with = if cx.user_auth.is_some() { "user_auth" } else { "token_exchange" };
                    problems.add(
                        "prefix",
                        format!(
                            "is required with {with} and no auth: each caller's tools are listed to that caller only, \
                             and a prefix keeps them apart from every other tool (e.g. prefix = \"crm_\"; or give \
                             `auth`, a service credential to list the catalog with)"
                        ),
                    );
                }
                if let Some(upstream) = &cx.user_auth
                    && config.token_exchange.is_some()
                {
                    problems.add(
                        "user_auth",
                        format!("calls carry each caller's own token from '{upstream}': drop token_exchange"),
                    );
                }
            }
            (None, Some(command)) => {
                if config.auth.is_some() || !config.headers.is_empty() {
                    problems.add("auth", "`auth` and `headers` are for `url` upstreams");
                }
                for (key, set) in
                    [("token_exchange", config.token_exchange.is_some()), ("user_auth", cx.user_auth.is_some())]
                {
                    if set {
                        problems.add(
                            key,
                            "is for `url` upstreams (a hosted stdio server is one process for every caller): remove \
                             it, or reach the server by `url`",
                        );
                    }
                }
                if config.processes == 0 || config.processes > 64 {
                    problems.add("processes", "must be between 1 and 64");
                }
                problems.ok(program(config, command, cx));
            }
            _ => {
                problems.add("url", "set exactly one of `url` (a remote server) and `command` (a hosted stdio server)");
            }
        }
        problems
    }
}

/// `url` upstreams take none of the keys of hosted servers.
fn stdio_keys_unset(c: &McpConfig) -> Result<(), ConfigProblem> {
    let set = [
        ("args", !c.args.is_empty()),
        ("env_allow", !c.env_allow.is_empty()),
        ("env", !c.env.is_empty()),
        ("working_dir", c.working_dir.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((key, _)) => Err(ConfigProblem::new(*key, "is for `command` upstreams (hosted stdio servers)")),
        None => Ok(()),
    }
}

/// The hosted server's program and environment, resolved once (as the CLI adapter does).
pub(crate) fn program(c: &McpConfig, command: &str, cx: &BuildContext) -> Result<Program, ConfigProblem> {
    let path = if cx.env.is_offline() {
        mcp_adapter_cli::executable::check_name(command).map(|()| command.into())
    } else {
        mcp_adapter_cli::executable::resolve(command, cx.env.get("PATH").map(std::ffi::OsStr::new))
    }
    .map_err(|p| ConfigProblem::new("command", p))?;
    for (i, a) in c.args.iter().enumerate() {
        if a.contains('\0') {
            return Err(ConfigProblem::new(format!("args[{i}]"), "contains a NUL byte"));
        }
    }
    let lookup = |name: &str| cx.env.get(name).map(OsString::from);
    let env = mcp_adapter_cli::env::resolve(&c.env_allow, &c.env, &c.allow_loader_env, &lookup)
        .map_err(|e| ConfigProblem::new(e.key, e.problem))?;
    Ok(Program {
        path,
        args: c.args.clone(),
        env,
        working_dir: c.working_dir.as_ref().map(Into::into),
        limits: c.limits,
    })
}
