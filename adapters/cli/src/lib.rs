//! The CLI adapter: command-line programs declared in config, served as MCP tools, safe by
//! default.
//!
//! Never a shell: each argument value becomes exactly one argv entry of a program resolved at
//! start-up; values that could be read as options and NUL bytes are refused. The child gets an
//! empty environment plus an allow-list (loader variables refused), runs in its own process
//! group, and the whole group is killed on timeout, cancellation or when the client goes away.
//!
//! Files (the roles every adapter has):
//! - [`config`]: the `[[adapters]] kind = "cli"` section as written.
//! - [`tool`]: validation at load into runnable tools; [`executable`] and [`env`] resolve the
//!   program and the environment; [`progress`] compiles `progress_pattern`.
//! - [`template`] and [`request`]: request building (argv from the template, stdin);
//!   [`confine`] and [`beneath`] open path arguments beneath their roots.
//! - [`process`]: execution (process group, pipes, deadline, kill, reap).
//! - [`output`]: output mapping (text, JSON + `outputSchema`, failures).

pub mod beneath;
pub mod config;
pub mod confine;
pub mod env;
pub mod executable;
pub mod output;
pub mod process;
pub mod progress;
pub mod request;
pub mod supervise;
pub mod template;
pub mod tool;

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::Arc;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{
    Adapter, AdapterError, Build, BuildContext, CallContext, Catalog, Exit, ExitEvents, Outcome, Problems, ToolCall,
    async_trait,
};
use tokio::time::Instant;
use tracing::Instrument as _;

pub use config::{CliConfig, OutputFormat, ToolConfig};

use crate::process::{Ended, Invocation};
use crate::progress::Progress;
use crate::request::Request;
use crate::tool::Tool;

/// The adapter: its tools, validated once at load.
#[derive(Debug)]
pub struct Cli {
    tools: HashMap<String, Tool>,
    /// Where each tool's exits are reported (`BuildContext::observe`).
    exits: HashMap<String, Arc<dyn ExitEvents>>,
    catalog: Catalog,
    /// Slots for runs of all tools (the adapter's `max_concurrent`).
    runs: tokio::sync::Semaphore,
    max_concurrent: usize,
}

impl Build for Cli {
    type Config = CliConfig;

    /// Validates `config`, every tool of it. `cx.env` is the runtime's environment: `PATH`
    /// (to resolve programs) and the variables tools allow-list (captured now, once).
    fn build(config: &CliConfig, cx: &BuildContext) -> Result<Self, Problems> {
        let mut problems = Problems::new();
        if config.tools.is_empty() {
            problems.add("tools", "declare at least one [[adapters.tools]]");
        }
        if config.max_concurrent == 0 || config.max_concurrent > tokio::sync::Semaphore::MAX_PERMITS {
            problems.add("max_concurrent", format!("must be between 1 and {}", tokio::sync::Semaphore::MAX_PERMITS));
        }
        let lookup_env = |name: &str| cx.env.get(name).map(OsString::from);
        let mut tools = HashMap::with_capacity(config.tools.len());
        let mut exits = HashMap::with_capacity(config.tools.len());
        let mut catalog = Catalog::default();
        let mut names = std::collections::HashSet::with_capacity(config.tools.len());
        for (i, c) in config.tools.iter().enumerate() {
            if c.name.is_empty() || !names.insert(c.name.as_str()) {
                let problem = format!("'{}' is empty or used twice; give each tool a unique name", c.name);
                problems.add(format!("tools[{i}].name"), problem);
                continue;
            }
            let Some(tool) =
                problems.ok(Tool::build(c, &format!("tools.{}", c.name), &lookup_env, cx.env.is_offline()))
            else {
                continue;
            };
            catalog.tools.push(tool.spec.clone());
            tools.insert(c.name.clone(), tool);
            exits.insert(c.name.clone(), cx.observe.exits(&c.name));
        }
        problems.finish(|| {
            let runs = tokio::sync::Semaphore::new(config.max_concurrent.clamp(1, tokio::sync::Semaphore::MAX_PERMITS));
            Self { tools, exits, catalog, runs, max_concurrent: config.max_concurrent }
        })
    }
}

#[async_trait]
impl Adapter for Cli {
    fn status(&self) -> mcp_adapter_api::Status {
        let running = self.max_concurrent.saturating_sub(self.runs.available_permits());
        mcp_adapter_api::Status { concurrency: Some((running, self.max_concurrent)), ..Default::default() }
    }

    fn catalog(&self) -> Catalog {
        self.catalog.clone()
    }

    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        let tool = self.tools.get(call.name).ok_or_else(|| AdapterError::UnknownTool(call.name.to_owned()))?;
        // Refusals (option-like values, NUL bytes) come before anything runs or waits.
        let request = Request::build(tool, call.arguments)?;
        let span = tracing::info_span!(
            "cli.run",
            "gen_ai.tool.name" = call.name,
            "process.executable.name" = %tool.program_name,
            "process.executable.path" = %tool.program.display(),
            "process.pid" = tracing::field::Empty,
            "process.exit.code" = tracing::field::Empty,
        );
        // The adapter's cap first (every run is a process tree), then the tool's own.
        let _slot = tokio::select! {
            biased;
            () = cx.cancel.cancelled() => return Err(AdapterError::Cancelled),
            slot = tokio::time::timeout_at(cx.deadline, self.runs.acquire()) => match slot {
                Ok(Ok(slot)) => slot,
                Ok(Err(closed)) => return Err(AdapterError::Internal(format!("adapter slots: {closed}"))),
                Err(_) => {
                    return Ok(Outcome::Complete(CallToolResult::error(format!(
                        "The tool '{}' is busy: all {} runs this adapter allows at once (max_concurrent) were in use \
                         until this call's deadline. Try again later.",
                        call.name, self.max_concurrent
                    ))));
                }
            },
        };
        let exits = self.exits.get(call.name).map(|e| &**e);
        run(tool, call.name, request, cx, exits).instrument(span).await.map(Outcome::Complete)
    }
}

/// Waits for a slot, runs the program, maps what it did.
async fn run(
    tool: &Tool,
    name: &str,
    mut request: Request,
    cx: &CallContext,
    exits: Option<&dyn ExitEvents>,
) -> Result<CallToolResult, AdapterError> {
    let budget = cx.remaining();
    let _permit = tokio::select! {
        biased;
        () = cx.cancel.cancelled() => return Err(AdapterError::Cancelled),
        permit = tokio::time::timeout_at(cx.deadline, tool.permits.acquire()) => match permit {
            Ok(Ok(permit)) => permit,
            Ok(Err(closed)) => return Err(AdapterError::Internal(format!("tool '{name}': {closed}"))),
            Err(_) => {
                return Ok(CallToolResult::error(format!(
                    "The tool '{name}' is busy: all {} runs it allows at once (max_concurrent) were in use \
                     until this call's deadline. Try again later.",
                    tool.max_concurrent
                )));
            }
        },
    };
    // After the slot, so the descriptors a call holds are bounded by the runs allowed at once.
    let handles = match request.open_paths(&tool.confinement) {
        Ok(handles) => handles,
        Err(refused) => return Ok(CallToolResult::error(refused)),
    };
    let mut progress = tool.progress.as_ref().filter(|_| cx.notifier.is_enabled()).map(Progress::new);
    let mut unfinished = Unfinished { exits, deadline: cx.deadline };
    let ended = {
        let mut on_line = |line: &str| {
            if let Some(update) = progress.as_mut().and_then(|p| p.line(line, Instant::now())) {
                cx.progress(update.progress, update.total, update.message.as_deref());
            }
        };
        let inv = Invocation {
            program: &tool.program,
            args: &request.args,
            env: &tool.env,
            working_dir: tool.working_dir.as_deref(),
            stdin: request.stdin,
            max_output_bytes: tool.max_output_bytes,
            limits: tool.limits,
        };
        let on_line: Option<&mut (dyn FnMut(&str) + Send)> =
            if tool.progress.is_some() && cx.notifier.is_enabled() { Some(&mut on_line) } else { None };
        process::run(inv, handles, cx.deadline, &cx.cancel, on_line)
            .await
            .map_err(|e| output::not_started(name, &tool.program, &e.to_string()))?
    };
    unfinished.exits = None;
    if let Some(update) = progress.as_mut().and_then(Progress::finish) {
        cx.progress(update.progress, update.total, update.message.as_deref());
    }
    if let Some(exit) = exit_of(&ended) {
        exits.inspect(|e| e.exited(exit));
    }
    match ended {
        Ended::Finished(finished) => {
            tracing::Span::current().record("process.exit.code", finished.status.code());
            if let Some(why) = output::spawn_failure(&finished) {
                return Err(output::not_started(name, &tool.program, &why));
            }
            tool.output.result(&finished)
        }
        Ended::TimedOut => Err(AdapterError::Timeout(budget)),
        Ended::Cancelled => Err(AdapterError::Cancelled),
    }
}

/// A run in progress. Dropped before it finished (the runtime bounds the call by the same
/// deadline and usually ends it first, killing the program), it counts as a timeout when the
/// deadline has passed; otherwise the caller went away, which is not reported.
struct Unfinished<'a> {
    exits: Option<&'a dyn ExitEvents>,
    deadline: Instant,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(e) = self.exits.filter(|_| Instant::now() >= self.deadline) {
            e.exited(Exit::Timeout);
        }
    }
}

/// How a run ended, for the observer; a cancelled run (the caller went away) is not an exit
/// of the program's making and is not reported.
fn exit_of(ended: &Ended) -> Option<Exit> {
    match ended {
        Ended::Finished(f) => Some(f.status.code().map_or(Exit::Signal, Exit::Code)),
        Ended::TimedOut => Some(Exit::Timeout),
        Ended::Cancelled => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_adapter_api::{Input, Notice, Notifier};
    use serde_json::{Value, json};
    use std::time::Duration;

    fn path_only() -> BuildContext {
        BuildContext::with_env([("PATH", "/usr/bin:/bin")].into_iter().collect())
    }

    fn cli(tools: &Value) -> Cli {
        let config: CliConfig = serde_json::from_value(json!({ "tools": tools })).unwrap();
        Cli::build(&config, &path_only()).unwrap()
    }

    async fn call(cli: &Cli, name: &str, args: Value, cx: &CallContext) -> Result<CallToolResult, AdapterError> {
        let call = ToolCall { name, arguments: args.as_object().unwrap(), input: Input::default() };
        match cli.call_tool(call, cx).await? {
            Outcome::Complete(r) => Ok(r),
            Outcome::InputRequired(_) => panic!("a CLI tool asked for input"),
        }
    }

    #[tokio::test]
    async fn runs_a_program_and_refuses_option_like_values() {
        let cli = cli(&json!([{
            "name": "say", "description": "d", "executable": "printf",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "args": ["%s", "{text}"],
        }]));
        let cx = CallContext::detached(Duration::from_secs(5));
        assert_eq!(call(&cli, "say", json!({"text": "$(id)"}), &cx).await.unwrap(), CallToolResult::text("$(id)"));
        let refused = call(&cli, "say", json!({"text": "-v"}), &cx).await.unwrap_err();
        assert!(matches!(refused, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "text"));
        assert!(matches!(call(&cli, "nope", json!({}), &cx).await, Err(AdapterError::UnknownTool(_))));
    }

    #[tokio::test]
    async fn timeouts_busy_slots_and_progress() {
        let cli = cli(&json!([{
            "name": "work", "description": "d", "executable": "sh", "max_concurrent": 1,
            "input_schema": {"type": "object", "properties": {"script": {"type": "string"}}, "required": ["script"]},
            "args": ["-c", "{script}"], "progress_pattern": "^(?P<progress>\\d+)%$",
        }]));
        let slow = json!({"script": "sleep 5"});
        let cx = CallContext::detached(Duration::from_millis(300));
        let (a, b) = tokio::join!(call(&cli, "work", slow.clone(), &cx), call(&cli, "work", slow, &cx));
        let (timed_out, busy) = if a.is_err() { (a, b) } else { (b, a) };
        assert!(matches!(timed_out, Err(AdapterError::Timeout(_))), "{timed_out:?}");
        let busy = busy.unwrap();
        assert!(busy.is_error && format!("{:?}", busy.content).contains("busy"), "{busy:?}");

        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let cx = CallContext { notifier: Notifier::new(tx), ..CallContext::detached(Duration::from_secs(5)) };
        let script = json!({"script": "echo 10% >&2; sleep 0.1; echo 90% >&2; echo done"});
        assert_eq!(call(&cli, "work", script, &cx).await.unwrap(), CallToolResult::text("done\n"));
        let mut seen = Vec::new();
        while let Ok(Notice::Progress { progress, .. }) = rx.try_recv() {
            seen.push(progress);
        }
        assert_eq!(seen, [10.0, 90.0]);
    }

    #[tokio::test]
    async fn the_adapter_caps_runs_of_all_its_tools() {
        let tool = |name: &str| json!({"name": name, "description": "d", "executable": "sleep", "args": ["5"], "max_concurrent": 8});
        let config: CliConfig =
            serde_json::from_value(json!({"max_concurrent": 1, "tools": [tool("a"), tool("b")]})).unwrap();
        let cli = Cli::build(&config, &path_only()).unwrap();
        let cx = CallContext::detached(Duration::from_millis(300));
        let (a, b) = tokio::join!(call(&cli, "a", json!({}), &cx), call(&cli, "b", json!({}), &cx));
        let (timed_out, busy) = if a.is_err() { (a, b) } else { (b, a) };
        assert!(matches!(timed_out, Err(AdapterError::Timeout(_))), "{timed_out:?}");
        let busy = busy.unwrap();
        assert!(busy.is_error && format!("{:?}", busy.content).contains("this adapter allows"), "{busy:?}");
        let zero: CliConfig = serde_json::from_value(json!({"max_concurrent": 0, "tools": [tool("a")]})).unwrap();
        assert_eq!(Cli::build(&zero, &path_only()).unwrap_err().iter().next().unwrap().key, "max_concurrent");
    }

    #[tokio::test]
    async fn path_arguments_reach_the_program_as_the_object_that_was_checked() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir(&root).unwrap();
        for (name, text) in [("a", "A"), ("b", "B"), ("-n", "N")] {
            std::fs::write(root.join(name), text).unwrap();
        }
        std::fs::write(t.path().join("secret"), "SECRET").unwrap();
        std::os::unix::fs::symlink("../secret", root.join("out")).unwrap();
        let cli = cli(&json!([{
            "name": "cat", "description": "d", "executable": "cat",
            "input_schema": {"type": "object", "required": ["files"],
                "properties": {"files": {"type": "array", "items": {"type": "string"}}}},
            "args": [{"each": "files", "then": ["{files}"]}],
            "paths": {"files": {"allowed_roots": [root], "kind": "file"}},
        }]));
        let cx = CallContext::detached(Duration::from_secs(5));
        // Relative, absolute under the root, and a name a program would read as an option:
        // the program sees /proc/self/fd/3, 4, 5 whatever the names.
        let files = json!({"files": ["a", root.join("b"), "-n"]});
        assert_eq!(call(&cli, "cat", files, &cx).await.unwrap(), CallToolResult::text("ABN"));
        let secret = t.path().join("secret");
        for bad in [json!("../secret"), json!(secret), json!("out"), json!("/etc/passwd")] {
            let r = call(&cli, "cat", json!({"files": ["a", bad]}), &cx).await.unwrap();
            let text = format!("{:?}", r.content);
            assert!(r.is_error && text.contains("'files.1'") && !text.contains("SECRET"), "{bad}: {text}");
        }

        // A symbolic link swapped in between the check and the program's own open: the
        // program still reads the object that was checked.
        let tool = &cli.tools["cat"];
        let mut request = Request::build(tool, json!({"files": ["a"]}).as_object().unwrap()).unwrap();
        let handles = request.open_paths(&tool.confinement).unwrap();
        assert_eq!(request.args, ["/proc/self/fd/3"]);
        std::fs::remove_file(root.join("a")).unwrap();
        std::os::unix::fs::symlink(&secret, root.join("a")).unwrap();
        let inv = Invocation {
            program: &tool.program,
            args: &request.args,
            env: &tool.env,
            working_dir: None,
            stdin: None,
            max_output_bytes: 100,
            limits: tool.limits,
        };
        let ended = process::run(inv, handles, cx.deadline, &cx.cancel, None).await.unwrap();
        let Ended::Finished(finished) = ended else { panic!("{ended:?}") };
        assert_eq!(finished.stdout, b"A");
        // Checked again on the next call, the swapped-in link is refused.
        let r = call(&cli, "cat", json!({"files": ["a"]}), &cx).await.unwrap();
        assert!(r.is_error && format!("{:?}", r.content).contains("leads outside"), "{r:?}");
    }

    #[test]
    fn config_errors_name_the_tool() {
        let config: CliConfig = serde_json::from_value(json!({"tools": [
            {"name": "a", "description": "d", "executable": "true"},
            {"name": "a", "description": "d", "executable": "true"},
        ]}))
        .unwrap();
        assert_eq!(
            Cli::build(&config, &BuildContext::default()).unwrap_err().iter().next().unwrap().key,
            "tools[1].name"
        );
        let config: CliConfig = serde_json::from_value(json!({"tools": [
            {"name": "a", "description": "d", "executable": "not-a-program-xyz"},
        ]}))
        .unwrap();
        let e = Cli::build(&config, &BuildContext::default()).unwrap_err();
        assert_eq!(e.iter().next().unwrap().key, "tools.a.executable");
        assert!(e.to_string().contains("not found on PATH"), "{e}");
    }
}
