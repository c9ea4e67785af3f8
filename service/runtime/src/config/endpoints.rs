//! `[[endpoints]]`: virtual MCP servers beside `server.path`, each a curated selection of the
//! adapters' tools, resources and prompts under its own path and server info, with per-tool
//! overrides (name, title, description, annotations, fixed arguments). What needs the
//! catalogs (that an overridden tool exists and is selected, that a fixed argument fits its
//! schema, that renamed tools stay unique) is checked when the registry is built
//! ([`crate::registry::endpoints`]); this module checks what the file alone can show.

use std::collections::BTreeMap;

use mcp_adapter_api::{ConfigProblem, Problems};
use mcp_protocol::Implementation;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::discovery::Discovery;

/// One `[[endpoints]]` entry as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEndpoint {
    /// URL path of this MCP server, e.g. `/mcp/github`: starts with `/`, differs from
    /// `server.path` and from every other endpoint's.
    pub path: String,
    /// `serverInfo.name` (default: `server.name`, `-`, the path's last segment).
    pub name: Option<String>,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `serverInfo.version` (default: `server.version`).
    pub version: Option<String>,
    /// `instructions` in its `server/discover` (default: none; `server.instructions`
    /// describes the whole catalog).
    pub instructions: Option<String>,
    /// This endpoint's canonical URL (its protected-resource metadata `resource`, RFC 9728;
    /// the audience its tokens carry, RFC 8707). Default: `auth.resource`'s origin and this
    /// path, when `[auth]` names a resource.
    pub resource: Option<String>,
    /// Scopes every request to this endpoint needs (with `[auth]`), beside the access rules
    /// of what it calls.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Adapters whose items it serves, by name (default: every adapter).
    pub adapters: Option<Vec<String>>,
    /// Globs over tool and prompt names and resource URIs (`search_*`, `docs://*`): only
    /// matching items are served (default: every item of its adapters).
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs of items it never serves, applied after `include`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Only tools whose annotations have these values, e.g. `{ readOnlyHint = true }` for
    /// a read-only endpoint (a tool without the annotation does not match).
    #[serde(default)]
    pub annotations: Map<String, Value>,
    /// `[endpoints.tools.<tool name>]`: how a tool it serves looks here (by its name in the
    /// catalog).
    #[serde(default)]
    pub tools: BTreeMap<String, ToolOverride>,
    /// How clients find this endpoint's tools: `"list"` (each tool listed) or `"search"`
    /// (`search_tools`, `describe_tools` and `call_tool` over its own selection, with
    /// `[discovery] results`). Default: `[discovery] mode`.
    pub discovery: Option<String>,
}

/// `[endpoints.tools.<name>]`: how one tool looks on an endpoint.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// The tool's name on this endpoint (`search_acme_issues`).
    pub name: Option<String>,
    /// Its title on this endpoint.
    pub title: Option<String>,
    /// Its description on this endpoint.
    pub description: Option<String>,
    /// Annotations set on this endpoint, over the tool's own (`{ readOnlyHint = true }`).
    pub annotations: Option<Map<String, Value>>,
    /// Arguments this endpoint always sends: removed from the input schema its clients see,
    /// and refused when a client sends them.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// A virtual endpoint, validated against the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// Its place among the file's `[[endpoints]]` (problems found later are keyed by it).
    pub index: usize,
    /// Where it is served.
    pub path: String,
    /// Its `serverInfo`.
    pub info: Implementation,
    /// Its `instructions`.
    pub instructions: Option<String>,
    /// Its canonical URL as written (the default is [`crate::config::AuthConfig`]'s to make).
    pub resource: Option<String>,
    /// Scopes every request to it needs.
    pub scopes: Vec<String>,
    /// The adapters it draws from (`None`: every adapter).
    pub adapters: Option<Vec<String>>,
    /// Item globs it serves (empty: every item).
    pub include: Vec<glob::Pattern>,
    /// Item globs it leaves out.
    pub exclude: Vec<glob::Pattern>,
    /// Annotation values a tool must have.
    pub annotations: Map<String, Value>,
    /// Per-tool overrides, by catalog name.
    pub tools: BTreeMap<String, ToolOverride>,
    /// How its clients find its tools (its own or `[discovery]`'s mode).
    pub discovery: Discovery,
}

impl Endpoint {
    /// Whether it serves an item named (or at URI) `name` of adapter `adapter`, before the
    /// annotation filter (tools only).
    pub fn selects(&self, adapter: &str, name: &str) -> bool {
        self.adapters.as_ref().is_none_or(|a| a.iter().any(|a| a == adapter))
            && (self.include.is_empty() || self.include.iter().any(|p| p.matches(name)))
            && !self.exclude.iter().any(|p| p.matches(name))
    }

    /// Whether a tool with these annotations passes the annotation filter.
    pub fn annotations_match(&self, annotations: Option<&Value>) -> bool {
        self.annotations.iter().all(|(k, want)| annotations.and_then(|a| a.get(k)) == Some(want))
    }
}

/// Paths an endpoint may not take: the runtime's own routes.
const RESERVED: [&str; 4] = ["/healthz", "/readyz", "/metrics", "/.well-known"];

/// Validates `[[endpoints]]`: every problem, not the first, into `problems`. The endpoints
/// without a problem are returned, so the registry can check their overrides against the
/// catalog in the same run. `server` gives the defaults and the paths already taken;
/// `adapters` the configured adapter names.
pub(super) fn endpoints(
    raw: &[RawEndpoint],
    server: (&str, &Implementation),
    discovery: (Discovery, usize),
    taken: &[&str],
    adapters: &[&str],
    all_problems: &mut Problems,
) -> Vec<Endpoint> {
    let (server_path, server_info) = server;
    let mut out = Vec::with_capacity(raw.len());
    for (i, e) in raw.iter().enumerate() {
        let mut problems = Problems::new();
        let key = |k: &str| format!("endpoints[{i}].{k}");
        let path = e.path.trim_end_matches('/');
        if !e.path.starts_with('/') || path.len() < 2 || e.path.contains(['?', '#', ' ']) {
            problems
                .add(key("path"), format!("'{}' must start with '/' and name a path, e.g. \"/mcp/github\"", e.path));
        } else if path == server_path.trim_end_matches('/') {
            problems.add(key("path"), format!("'{path}' is server.path; give this endpoint a path of its own"));
        } else if let Some(prev) = raw[..i].iter().position(|p| p.path.trim_end_matches('/') == path) {
            problems.add(key("path"), format!("'{path}' is already the path of endpoints[{prev}]"));
        } else if RESERVED.iter().chain(taken).any(|r| path == *r || path.starts_with(&format!("{r}/"))) {
            problems.add(
                key("path"),
                format!("'{path}' is a path the runtime serves itself (probes, metrics, metadata, console)"),
            );
        }
        if let Some(list) = &e.adapters {
            for (j, a) in list.iter().enumerate().filter(|(_, a)| !adapters.contains(&a.as_str())) {
                let problem = ConfigProblem::new(
                    key(&format!("adapters[{j}]")),
                    format!("no adapter is named '{a}' (adapters: {})", adapters.join(", ")),
                );
                problems.push(match mcp_adapter_api::closest(a, adapters.iter().copied()) {
                    Some(near) => problem.help(format!("did you mean `{near}`?")),
                    None => problem,
                });
            }
        }
        let mut globs = |list: &[String], what: &str| -> Vec<glob::Pattern> {
            list.iter()
                .enumerate()
                .filter_map(|(j, g)| {
                    glob::Pattern::new(g)
                        .map_err(|err| {
                            problems.add(key(&format!("{what}[{j}]")), format!("'{g}' is not a glob ({err})"));
                        })
                        .ok()
                })
                .collect()
        };
        let include = globs(&e.include, "include");
        let exclude = globs(&e.exclude, "exclude");
        check_annotations(&e.annotations, &key("annotations"), &mut problems);
        if let Some(r) = e.resource.as_deref().filter(|r| !(r.starts_with("https://") || r.starts_with("http://"))) {
            problems.add(key("resource"), format!("'{r}' is not an http(s) URL (this endpoint's canonical URL)"));
        }
        if e.scopes.iter().any(|s| s.is_empty() || s.contains([' ', '"', '\\'])) {
            problems.add(
                key("scopes"),
                "a scope is a non-empty word without spaces, quotes or backslashes (RFC 6749 §3.3)",
            );
        }
        for (tool, o) in &e.tools {
            if let Some(a) = &o.annotations {
                check_annotations(a, &key(&format!("tools.{tool}.annotations")), &mut problems);
            }
            if let Some(name) = &o.name
                && !mcp_protocol::Tool::valid_name(name)
            {
                problems.add(
                    key(&format!("tools.{tool}.name")),
                    format!("'{name}' is not a tool name: 1-128 characters from A-Z a-z 0-9 _ - ."),
                );
            }
        }
        let discovery = match e.discovery.as_deref() {
            None => discovery.0,
            Some("list") => Discovery::List,
            Some("search") => Discovery::Search { results: discovery.1 },
            Some(other) => {
                problems.add(
                    key("discovery"),
                    format!(
                        "unknown mode '{other}': use \"list\" (every tool listed) or \"search\" (search, describe and call tools)"
                    ),
                );
                discovery.0
            }
        };
        if !problems.is_empty() {
            all_problems.extend(problems);
            continue;
        }
        let segment = path.rsplit('/').next().unwrap_or_default();
        out.push(Endpoint {
            index: i,
            path: path.to_owned(),
            info: Implementation {
                name: e.name.clone().unwrap_or_else(|| format!("{}-{segment}", server_info.name)),
                version: e.version.clone().unwrap_or_else(|| server_info.version.clone()),
                title: e.title.clone(),
                description: None,
                website_url: None,
            },
            instructions: e.instructions.clone(),
            resource: e.resource.clone(),
            scopes: e.scopes.clone(),
            adapters: e.adapters.clone(),
            include,
            exclude,
            annotations: e.annotations.clone(),
            tools: e.tools.clone(),
            discovery,
        });
    }
    out
}

/// The tool annotations of MCP 2026-07-28 server/tools (`ToolAnnotations`) and whether each
/// is a boolean (`title` is a string).
const ANNOTATIONS: [(&str, bool); 5] = [
    ("title", false),
    ("readOnlyHint", true),
    ("destructiveHint", true),
    ("idempotentHint", true),
    ("openWorldHint", true),
];

fn check_annotations(set: &Map<String, Value>, at: &str, problems: &mut Problems) {
    for (k, v) in set {
        match ANNOTATIONS.iter().find(|(name, _)| name == k) {
            None => {
                let names: Vec<&str> = ANNOTATIONS.iter().map(|(n, _)| *n).collect();
                let problem = ConfigProblem::new(
                    format!("{at}.{k}"),
                    format!("'{k}' is not a tool annotation ({})", names.join(", ")),
                )
                .at_key();
                problems.push(match mcp_adapter_api::closest(k, names) {
                    Some(near) => problem.help(format!("did you mean `{near}`?")),
                    None => problem,
                });
            }
            Some((_, true)) if !v.is_boolean() => {
                problems.add(format!("{at}.{k}"), format!("{v} is not true or false"));
            }
            Some((_, false)) if !v.is_string() => problems.add(format!("{at}.{k}"), format!("{v} is not a string")),
            Some(_) => {}
        }
    }
}
