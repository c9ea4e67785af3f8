//! Configuration of the CLI adapter as written in the file: `[[adapters]] kind = "cli"` with
//! `[[adapters.tools]]` entries. [`crate::tool`] validates it into runnable tools.

use schemars::JsonSchema;
use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_adapter_api::{ToolDecl, ToolKind};
use serde::Deserialize;
use serde_json::Value;

/// Largest stdout kept by default (1 MiB); the rest is drained and counted.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// Runs of one tool at the same time, by default.
pub const DEFAULT_MAX_CONCURRENT: usize = 8;

/// Runs of all tools of one adapter at the same time, by default.
pub const DEFAULT_ADAPTER_MAX_CONCURRENT: usize = 64;

/// `[[adapters]] kind = "cli"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliConfig {
    /// Runs of all this adapter's tools at the same time (each run is a process tree): the
    /// replica's cap, beside each tool's own `max_concurrent`.
    #[serde(default = "default_adapter_max_concurrent")]
    pub max_concurrent: usize,
    /// The tools, in listing order.
    pub tools: Vec<ToolConfig>,
}

fn default_adapter_max_concurrent() -> usize {
    DEFAULT_ADAPTER_MAX_CONCURRENT
}

/// `limits = { ... }` of one tool: what one run may use; 0 means no limit. Enforced by the
/// run's supervisor (`crate::supervise`): CPU time, file size and open files as rlimits it
/// sets before starting the program (inherited by every process of the run), memory and
/// processes by watching the run's whole process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunLimits {
    /// Resident memory of the whole process tree (bytes); over it the tree is killed.
    pub memory_bytes: u64,
    /// CPU time of each process (seconds, `RLIMIT_CPU`): `SIGXCPU`, then `SIGKILL`.
    pub cpu_seconds: u64,
    /// Processes in the tree at once; over it the tree is killed.
    pub processes: u64,
    /// Largest file a process may write (bytes, `RLIMIT_FSIZE`): `SIGXFSZ`.
    pub file_bytes: u64,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 1024 * 1024 * 1024,
            cpu_seconds: 60,
            processes: 256,
            file_bytes: 1024 * 1024 * 1024,
            open_files: 1024,
        }
    }
}

/// One `[[adapters.tools]]` entry: the declaration every adapter kind shares (name,
/// description, schemas, annotations, policy, the unknown-key guard) plus [`CliTool`].
pub type ToolConfig = ToolDecl<CliTool>;

/// The CLI-specific keys of a tool entry.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct CliTool {
    /// The program: a bare name looked up on the runtime's `PATH` at start-up, or an
    /// absolute path.
    pub executable: String,
    /// The argv template (see the README's grammar): strings with `{arg}` placeholders, and
    /// `{ if = "arg", then = [...] }` / `{ each = "arg", then = [...] }` groups.
    #[serde(default)]
    pub args: Vec<Value>,
    /// The argument written to the program's stdin (strings as they are, other values as
    /// JSON). Without it, stdin is empty (`/dev/null`).
    #[serde(default)]
    pub stdin: Option<String>,
    /// Working directory of the program (default: the runtime's).
    #[serde(default)]
    pub working_dir: Option<PathBuf>,
    /// Largest stdout kept; more is drained, counted and reported as truncated.
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
    /// Runs of this tool at the same time; calls beyond wait for a slot until their deadline.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Variables passed from the runtime's environment (exact names). Nothing else is.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// Fixed variables set for the program (after `env_allow`, so they win).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Loader variables (`LD_PRELOAD`, `NODE_OPTIONS`, `GIT_CONFIG_GLOBAL`, ...) allowed in
    /// `env_allow` / `env`: a list of names, or `true` for every one.
    #[serde(default)]
    pub allow_loader_env: crate::env::LoaderOptIn,
    /// Arguments whose values may start with `-` even where the program could read them as
    /// an option (only for programs that take such values safely at that position).
    #[serde(default)]
    pub allow_leading_dash: Vec<String>,
    /// How stdout becomes the result.
    #[serde(default)]
    pub output: OutputFormat,
    /// A regex applied to stderr lines; each match is a progress notification. Named groups
    /// `progress`, `total` and `message` are used when present.
    #[serde(default)]
    pub progress_pattern: Option<String>,
    /// Exit codes that mean success (default `[0]`); e.g. `[0, 1]` for grep ("no match").
    #[serde(default = "default_ok_exit_codes")]
    pub ok_exit_codes: Vec<i32>,
    /// What one run may use.
    #[serde(default)]
    pub limits: RunLimits,
    /// Arguments that are paths, kept inside directories: `paths.<argument> = {
    /// allowed_roots = ["/srv/data"] }`. The program gets the object opened beneath a root,
    /// never the caller's text (see `crate::confine`).
    #[serde(default)]
    pub paths: BTreeMap<String, PathArg>,
}

/// `paths.<argument> = { allowed_roots = [...], kind = "..." }`: the argument's value (or each
/// item, for an array) names an existing object beneath one of `allowed_roots`, reached
/// without following a symbolic link out of them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArg {
    /// Absolute directories the value must lie beneath. A relative value starts at the first;
    /// an absolute value must start with one of them.
    pub allowed_roots: Vec<PathBuf>,
    /// What the value must name (default: a file or a directory).
    #[serde(default)]
    pub kind: PathKind,
}

/// `kind = "any" | "file" | "directory"` of a path argument.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    /// A regular file or a directory (never a device, FIFO or socket).
    #[default]
    Any,
    /// A regular file.
    File,
    /// A directory.
    Directory,
}

impl ToolKind for CliTool {
    const NAME: &'static str = "CLI";
    const KEYS: &'static [&'static str] = &[
        "executable",
        "args",
        "stdin",
        "working_dir",
        "max_output_bytes",
        "max_concurrent",
        "env_allow",
        "env",
        "allow_loader_env",
        "allow_leading_dash",
        "output",
        "progress_pattern",
        "ok_exit_codes",
        "limits",
        "paths",
    ];
}

/// `output = "text" | "json"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// stdout as one text block.
    #[default]
    Text,
    /// stdout parsed as JSON into `structuredContent` (checked against `output_schema`), plus
    /// the JSON as a text block.
    Json,
}

fn default_max_output_bytes() -> usize {
    DEFAULT_MAX_OUTPUT_BYTES
}

fn default_max_concurrent() -> usize {
    DEFAULT_MAX_CONCURRENT
}

fn default_ok_exit_codes() -> Vec<i32> {
    vec![0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_adapter_api::protocol::empty_object_schema;
    use serde_json::json;

    #[test]
    fn defaults_and_policy_sit_beside_the_tool_keys() {
        let c: CliConfig = serde_json::from_value(json!({"tools": [{
            "name": "now", "description": "d", "executable": "date",
            "timeout_ms": 500, "confirm": true, "timout": 1,
        }]}))
        .unwrap();
        let t = &c.tools[0];
        assert_eq!(t.policy.timeout_ms, Some(500));
        assert!(t.policy.confirm);
        assert_eq!(*t.input_schema, empty_object_schema());
        assert_eq!(
            (t.kind.max_output_bytes, t.kind.max_concurrent),
            (DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_CONCURRENT)
        );
        assert_eq!(t.kind.ok_exit_codes, [0]);
        assert_eq!(t.kind.output, OutputFormat::Text);
        // The typo is kept aside, to be refused by name.
        assert_eq!(t.unknown.keys().collect::<Vec<_>>(), ["timout"]);
    }

    #[test]
    fn adapter_level_keys_are_checked() {
        assert!(serde_json::from_value::<CliConfig>(json!({"tools": [], "tool": []})).is_err());
    }
}
