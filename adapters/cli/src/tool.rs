//! Validation at config load: a [`ToolConfig`] becomes a runnable [`Tool`] (program resolved,
//! template checked against the schema, environment resolved, patterns compiled), or an
//! error naming the key.

use std::ffi::OsString;
use std::path::PathBuf;

use mcp_adapter_api::ToolSpec;
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::beneath::Method;
use crate::config::{OutputFormat, RunLimits, ToolConfig};
use crate::confine::Confinement;
use crate::output::OutputMapping;
use crate::progress::ProgressPattern;
use crate::template::{Template, no_property};
use mcp_adapter_api::{ConfigProblem, Problems};

use crate::{env, executable};

/// One tool, ready to run.
#[derive(Debug)]
pub struct Tool {
    /// What `tools/list` shows, plus the runtime policy.
    pub spec: ToolSpec,
    /// Absolute path of the program.
    pub program: PathBuf,
    /// Its file name (for spans and logs).
    pub program_name: String,
    /// The argv template.
    pub template: Template,
    /// Arguments whose values may start an argv entry with `-`.
    pub allow_leading_dash: Vec<String>,
    /// The argument fed to stdin.
    pub stdin: Option<String>,
    /// Working directory.
    pub working_dir: Option<PathBuf>,
    /// The child's whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// The stdout cap.
    pub max_output_bytes: usize,
    /// Slots for concurrent runs.
    pub permits: Semaphore,
    /// `max_concurrent`, for the "busy" message.
    pub max_concurrent: usize,
    /// The stderr progress pattern.
    pub progress: Option<ProgressPattern>,
    /// How runs become results.
    pub output: OutputMapping,
    /// What one run may use.
    pub limits: RunLimits,
    /// The path arguments and their roots.
    pub confinement: Confinement,
}

/// Test builds only (the `test-hooks` feature): set in the runtime's environment, path
/// arguments are resolved by the fallback walk even where the kernel has `openat2`, so the
/// black-box tests exercise both.
pub const FORCE_WALK_ENV: &str = "MCP_TEST_CLI_PATH_WALK";

fn path_method(lookup_env: &dyn Fn(&str) -> Option<OsString>) -> Method {
    if cfg!(feature = "test-hooks") && lookup_env(FORCE_WALK_ENV).is_some_and(|v| v == "1") {
        tracing::warn!("path arguments are resolved by the fallback walk ({FORCE_WALK_ENV}=1, a test switch)");
        Method::Walk
    } else {
        Method::Auto
    }
}

impl Tool {
    /// Validates `c`, reporting every problem of it; `key` is its prefix in messages
    /// (`tools.grep`); `lookup_env` reads the runtime's environment (`PATH` and the
    /// allow-listed variables). `offline` checks the file alone: the program is not looked up.
    pub fn build(
        c: &ToolConfig,
        key: &str,
        lookup_env: &dyn Fn(&str) -> Option<OsString>,
        offline: bool,
    ) -> Result<Self, Problems> {
        let mut problems = c.check();
        let mut err = |sub: &str, problem: String| problems.push(ConfigProblem::new(sub, problem));
        let properties = c.input_schema.get("properties").and_then(Value::as_object);
        let property = |name: &str| properties.is_some_and(|p| p.contains_key(name));

        let program = if offline {
            executable::check_name(&c.kind.executable).map(|()| PathBuf::from(&c.kind.executable))
        } else {
            executable::resolve(&c.kind.executable, lookup_env("PATH").as_deref())
        }
        .map_err(|p| err("executable", p))
        .ok();
        let program_name =
            program.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let template = Template::parse(&c.kind.args, &c.input_schema).map_err(|e| err(&e.path, e.problem)).ok();
        let confinement = Confinement::build(&c.kind.paths, &c.input_schema, path_method(lookup_env), offline)
            .map_err(|(sub, problem)| err(&sub, problem))
            .ok();
        if let (Some(template), Some(confinement)) = (&template, &confinement) {
            let _ = template.check_paths(&|name| confinement.is_path(name)).map_err(|e| err(&e.path, e.problem));
        }
        if let Some(stdin) = &c.kind.stdin {
            if confinement.as_ref().is_some_and(|c| c.is_path(stdin)) {
                err("stdin", format!("'{stdin}' is a path argument: pass it in args, not on stdin"));
            } else if !property(stdin) {
                err("stdin", no_property(stdin, stdin, properties));
            }
        }
        for name in c.kind.allow_leading_dash.iter().filter(|n| !property(n)) {
            err("allow_leading_dash", no_property(name, name, properties));
        }
        if let Some(dir) = &c.kind.working_dir
            && !(dir.is_absolute() && (offline || dir.is_dir()))
        {
            err("working_dir", format!("'{}' is not an absolute path to a directory", dir.display()));
        }
        if c.kind.max_output_bytes == 0 {
            err("max_output_bytes", "must be at least 1".into());
        }
        if c.kind.max_concurrent == 0 || c.kind.max_concurrent > Semaphore::MAX_PERMITS {
            err("max_concurrent", format!("must be between 1 and {}", Semaphore::MAX_PERMITS));
        }
        if c.kind.ok_exit_codes.is_empty() || c.kind.ok_exit_codes.iter().any(|code| !(0..=255).contains(code)) {
            err("ok_exit_codes", "list exit codes between 0 and 255 (default [0])".into());
        }
        let env = env::resolve(&c.kind.env_allow, &c.kind.env, &c.kind.allow_loader_env, lookup_env)
            .map_err(|e| err(&e.key, e.problem))
            .ok();
        let progress = c
            .kind
            .progress_pattern
            .as_deref()
            .map(ProgressPattern::parse)
            .transpose()
            .map_err(|p| err("progress_pattern", p))
            .ok();
        // The schema itself was checked by `c.check()`: compile it only when it is valid.
        let validator = match (&c.output_schema, c.kind.output) {
            (None, _) => None,
            (Some(_), OutputFormat::Text) => {
                err("output_schema", "describes structured output, which needs output = \"json\"".into());
                None
            }
            (Some(schema), OutputFormat::Json) => jsonschema::validator_for(schema).ok(),
        };
        let (Some(program), Some(template), Some(confinement), Some(env), Some(progress)) =
            (program, template, confinement, env, progress)
        else {
            return Err(problems.under(key));
        };
        if !problems.is_empty() {
            return Err(problems.under(key));
        }
        warn_unused_properties(c, &template, key);

        let spec = c.spec();
        Ok(Self {
            spec,
            program,
            program_name,
            template,
            allow_leading_dash: c.kind.allow_leading_dash.clone(),
            stdin: c.kind.stdin.clone(),
            working_dir: c.kind.working_dir.clone(),
            env,
            max_output_bytes: c.kind.max_output_bytes,
            permits: Semaphore::new(c.kind.max_concurrent),
            max_concurrent: c.kind.max_concurrent,
            progress,
            output: OutputMapping {
                format: c.kind.output,
                validator,
                ok_exit_codes: c.kind.ok_exit_codes.clone(),
                max_output_bytes: c.kind.max_output_bytes,
            },
            limits: c.kind.limits,
            confinement,
        })
    }
}

/// An argument the schema offers but nothing uses is silently ignored at call time: likely a
/// config mistake, but not always (an argument may exist only for `x-mcp-header` routing).
fn warn_unused_properties(c: &ToolConfig, template: &Template, key: &str) {
    let used = template.arguments();
    let Some(props) = c.input_schema.get("properties").and_then(Value::as_object) else { return };
    for name in props.keys() {
        if !used.contains(name.as_str()) && c.kind.stdin.as_deref() != Some(name) {
            tracing::warn!(key, argument = %name, "input_schema offers an argument that neither args nor stdin uses");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn build(extra: &Value) -> Result<Tool, Problems> {
        let mut tool = json!({
            "name": "t", "description": "d", "executable": "printf",
            "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
            "args": ["%s", "{x}"],
        });
        tool.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let c: ToolConfig = serde_json::from_value(tool).unwrap();
        Tool::build(&c, "tools.t", &|k| (k == "PATH").then(|| "/usr/bin:/bin".into()), false)
    }

    fn key_of(extra: &Value) -> String {
        build(extra).unwrap_err().iter().next().expect("a problem").key.clone()
    }

    #[test]
    fn every_problem_of_a_tool_at_once_and_offline_skips_only_the_program() {
        let extra = json!({"stdn": "x", "max_output_bytes": 0, "executable": "no-such-program-xyz",
            "input_schema": {"type": "object", "properties": {"x": {"type": "strng"}}, "required": ["x"]}});
        let keys: Vec<String> = build(&extra).unwrap_err().into_iter().map(|p| p.key).collect();
        assert_eq!(
            keys,
            [
                "tools.t.stdn",
                "tools.t.input_schema.properties.x.type",
                "tools.t.executable",
                "tools.t.max_output_bytes"
            ]
        );
        let mut tool = json!({"name": "t", "description": "d", "executable": "no-such-program-xyz", "stdn": "x"});
        let c: ToolConfig = serde_json::from_value(tool.take()).unwrap();
        let offline: Vec<String> =
            Tool::build(&c, "tools.t", &|_| None, true).unwrap_err().into_iter().map(|p| p.key).collect();
        assert_eq!(offline, ["tools.t.stdn"]);
    }

    #[test]
    fn a_valid_tool_lists_its_definition() {
        let t = build(&json!({"annotations": {"readOnlyHint": true}, "timeout_ms": 10})).unwrap();
        assert!(t.program.is_absolute());
        assert_eq!(t.program_name, "printf");
        assert_eq!(t.spec.policy.timeout_ms, Some(10));
        let listed = serde_json::to_value(&t.spec.tool).unwrap();
        assert_eq!(listed["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(listed["inputSchema"]["required"], json!(["x"]));
    }

    #[test]
    fn every_problem_names_its_key() {
        assert_eq!(key_of(&json!({"timout_ms": 1})), "tools.t.timout_ms");
        assert_eq!(key_of(&json!({"description": " "})), "tools.t.description");
        assert_eq!(key_of(&json!({"executable": "no-such-program-xyz"})), "tools.t.executable");
        assert_eq!(key_of(&json!({"args": ["{y}"]})), "tools.t.args[0]");
        assert_eq!(key_of(&json!({"stdin": "y"})), "tools.t.stdin");
        assert_eq!(key_of(&json!({"allow_leading_dash": ["y"]})), "tools.t.allow_leading_dash");
        assert_eq!(key_of(&json!({"working_dir": "relative"})), "tools.t.working_dir");
        assert_eq!(key_of(&json!({"max_output_bytes": 0})), "tools.t.max_output_bytes");
        assert_eq!(key_of(&json!({"max_concurrent": 0})), "tools.t.max_concurrent");
        assert_eq!(key_of(&json!({"ok_exit_codes": [256]})), "tools.t.ok_exit_codes");
        assert_eq!(key_of(&json!({"env_allow": ["LD_PRELOAD"]})), "tools.t.env_allow");
        assert_eq!(key_of(&json!({"env": {"BASH_ENV": "/x"}})), "tools.t.env.BASH_ENV");
        assert_eq!(key_of(&json!({"progress_pattern": "("})), "tools.t.progress_pattern");
        assert_eq!(key_of(&json!({"output_schema": {"type": "object"}})), "tools.t.output_schema");
        assert_eq!(key_of(&json!({"output": "json", "output_schema": {"type": 5}})), "tools.t.output_schema.type");
        let root = std::env::temp_dir();
        let confined = |args: Value| json!({"args": args, "paths": {"x": {"allowed_roots": [root]}}});
        assert_eq!(key_of(&json!({"paths": {"x": {"allowed_roots": ["rel"]}}})), "tools.t.paths.x.allowed_roots[0]");
        assert_eq!(key_of(&json!({"paths": {"y": {"allowed_roots": [root]}}})), "tools.t.paths.y");
        assert_eq!(key_of(&confined(json!(["{x}/sub"]))), "tools.t.args[0]");
        assert_eq!(key_of(&confined(json!(["{x}{x}"]))), "tools.t.args[0]");
        assert_eq!(key_of(&confined(json!(["a", {"if": "x", "then": ["{x}.bak"]}]))), "tools.t.args[1].then[0]");
        assert!(build(&confined(json!(["--file={x}"]))).is_ok());
        let on_stdin = json!({"args": [], "stdin": "x", "paths": {"x": {"allowed_roots": [root]}}});
        assert_eq!(key_of(&on_stdin), "tools.t.stdin");
    }
}
